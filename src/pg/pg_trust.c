/*-------------------------------------------------------------------------
 *
 * pg_trust.c
 *	  The one rule of docs/security.md, "Whose code runs": code of another
 *	  role never runs inside a madlib_dl call.
 *
 *	  In PostgreSQL a type's input and output functions, its casts, the
 *	  CHECK of a domain, an operator, a row-security policy, a trigger, a
 *	  rule and a column DEFAULT run with the rights of whoever runs the
 *	  query, not of the role that created them.  So before madlib_dl reads
 *	  a table it checks here, from the catalog alone, that every column of
 *	  that table has a type it trusts (recursively: the element of an
 *	  array, the base of a domain, the attributes of a composite, the
 *	  subtype of a range), and that no row-security policy of the table
 *	  calls a function, operator or type it does not trust; before it
 *	  writes into a table that already exists, that the caller owns it and
 *	  that no trigger, rule, default, CHECK or index expression of the
 *	  table calls such code.
 *
 *	  Trusted: an object owned by the bootstrap superuser (everything in
 *	  pg_catalog), by a superuser (who can become any role anyway: an
 *	  extension's types), or by the calling role itself (current_user:
 *	  its own code, its own business).  Anything owned by another role is
 *	  refused with 42501, naming the table, the column, the type and its
 *	  owner.  This holds for a superuser caller too.
 *
 *	  The check takes AccessShareLock on the table first (after the
 *	  caller's privilege is checked, so that a role without SELECT cannot
 *	  hold a lock), so that no column changes type before the transaction
 *	  ends.
 *
 *	  SQL: madlib_dl._assert_trusted_table(regclass, text) and
 *	  madlib_dl._assert_writable_table(regclass, text) (api/checks.c),
 *	  which every PL/pgSQL driver calls; from C, dl_pg_require_columns
 *	  calls dl_pg_require_trusted_table itself.
 *
 * IDENTIFICATION
 *	  src/pg/pg_trust.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_util.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_attrdef.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_policy.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_range.h"
#include "catalog/pg_rewrite.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/regproc.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#define DL_TRUST_HINT_READ \
	"Cast the column to a built-in type in a view that you own (predict, evaluate) or in a table that you own " \
	"(CREATE TABLE ... AS SELECT col::text ...), and give that (docs/security.md)."

bool
dl_pg_owner_trusted(Oid owner)
{
	return owner == BOOTSTRAP_SUPERUSERID || owner == GetUserId() || superuser_arg(owner);
}

static char *
dl_pg_role_label(Oid role)
{
	char	   *n = GetUserNameFromId(role, true);

	return n != NULL ? (char *) quote_identifier(n) : psprintf("%u", role);
}

/*
 * The first type not trusted among those of the attributes (not dropped)
 * of the composite type's relation relid, walked as dl_pg_untrusted_type
 * does; InvalidOid when all are trusted.  *owner: its owner.
 */
static Oid
untrusted_attribute_type(Oid relid, Oid *owner)
{
	Oid			bad = InvalidOid;
	int			natts = 0;
	HeapTuple	ctup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));

	if (HeapTupleIsValid(ctup))
	{
		natts = ((Form_pg_class) GETSTRUCT(ctup))->relnatts;
		ReleaseSysCache(ctup);
	}
	for (AttrNumber a = 1; a <= natts && !OidIsValid(bad); a++)
	{
		HeapTuple	atup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(a));

		if (!HeapTupleIsValid(atup))
			continue;
		if (!((Form_pg_attribute) GETSTRUCT(atup))->attisdropped)
		{
			Oid			at = ((Form_pg_attribute) GETSTRUCT(atup))->atttypid;

			ReleaseSysCache(atup);
			bad = dl_pg_untrusted_type(at, owner);
		}
		else
			ReleaseSysCache(atup);
	}
	return bad;
}

/*
 * The first type, walking type (the element of an array, the base of a
 * domain, the attributes of a composite, the subtype of a range or
 * multirange), that is owned by a role not trusted; InvalidOid when all
 * are trusted.  *owner: its owner.
 */
Oid
dl_pg_untrusted_type(Oid type, Oid *owner)
{
	HeapTuple	tup;
	Form_pg_type t;
	Oid			bad = InvalidOid;
	Oid			next[2] = {InvalidOid, InvalidOid};
	Oid			relid = InvalidOid;

	check_stack_depth();
	CHECK_FOR_INTERRUPTS();
	if (!OidIsValid(type))
		return InvalidOid;
	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(type));
	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	t = (Form_pg_type) GETSTRUCT(tup);
	if (!dl_pg_owner_trusted(t->typowner))
	{
		*owner = t->typowner;
		ReleaseSysCache(tup);
		return type;
	}
	if (t->typtype == TYPTYPE_DOMAIN)
		next[0] = t->typbasetype;
	else if (OidIsValid(t->typelem))
		next[0] = t->typelem;
	if (t->typtype == TYPTYPE_COMPOSITE)
		relid = t->typrelid;
	if (t->typtype == TYPTYPE_RANGE)
		next[1] = get_range_subtype(type);
#ifdef TYPTYPE_MULTIRANGE			/* PostgreSQL 14 (Greenplum 7 is 12: none) */
	if (t->typtype == TYPTYPE_MULTIRANGE)
		next[1] = get_multirange_range(type);
#endif
	ReleaseSysCache(tup);

	for (int i = 0; i < 2 && !OidIsValid(bad); i++)
		if (OidIsValid(next[i]) && next[i] != type)
			bad = dl_pg_untrusted_type(next[i], owner);
	if (!OidIsValid(bad) && OidIsValid(relid))
		bad = untrusted_attribute_type(relid, owner);
	return bad;
}

/*
 * Is the object refclassid/refobjid (a function, an operator or a type
 * that an expression of the table uses) owned by a trusted role?  On no,
 * *what and *owner say which object and whose.
 */
static bool
dl_pg_ref_trusted(Oid refclassid, Oid refobjid, char **what, Oid *owner)
{
	HeapTuple	tup;
	bool		ok = true;

	if (refclassid == ProcedureRelationId)
	{
		tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(refobjid));
		if (HeapTupleIsValid(tup))
		{
			*owner = ((Form_pg_proc) GETSTRUCT(tup))->proowner;
			ok = dl_pg_owner_trusted(*owner);
			ReleaseSysCache(tup);
			if (!ok)
				*what = psprintf("function %s", format_procedure(refobjid));
		}
	}
	else if (refclassid == OperatorRelationId)
	{
		tup = SearchSysCache1(OPEROID, ObjectIdGetDatum(refobjid));
		if (HeapTupleIsValid(tup))
		{
			Form_pg_operator op = (Form_pg_operator) GETSTRUCT(tup);
			Oid			code = op->oprcode;

			*owner = op->oprowner;
			ok = dl_pg_owner_trusted(*owner);
			ReleaseSysCache(tup);
			if (ok && OidIsValid(code))
				return dl_pg_ref_trusted(ProcedureRelationId, code, what, owner);
			if (!ok)
				*what = psprintf("operator %s", format_operator(refobjid));
		}
	}
	else if (refclassid == TypeRelationId)
	{
		Oid			bad = dl_pg_untrusted_type(refobjid, owner);

		if (OidIsValid(bad))
		{
			ok = false;
			*what = psprintf("type %s", format_type_be(bad));
		}
	}
	return ok;
}

/*
 * ERROR 42501 when the object classid/objid (a policy, trigger, rule,
 * default, constraint or index of table label) depends on a function,
 * operator or type of an untrusted role.  kind names the object.
 */
static void
dl_pg_require_trusted_deps(Oid classid, Oid objid, const char *label, const char *kind)
{
	Relation	dep = table_open(DependRelationId, AccessShareLock);
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;

	ScanKeyInit(&key[0], Anum_pg_depend_classid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(classid));
	ScanKeyInit(&key[1], Anum_pg_depend_objid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(objid));
	scan = systable_beginscan(dep, DependDependerIndexId, true, NULL, 2, key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_depend d = (Form_pg_depend) GETSTRUCT(tup);
		char	   *what = NULL;
		Oid			owner = InvalidOid;

		if (!dl_pg_ref_trusted(d->refclassid, d->refobjid, &what, &owner))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("table %s has a %s that calls %s, owned by role %s: madlib_dl runs no other role's code",
							label, kind, what, dl_pg_role_label(owner)),
					 errhint("Give a table of your own without it (docs/security.md).")));
	}
	systable_endscan(scan);
	table_close(dep, AccessShareLock);
}

/* The owner of relation relid (InvalidOid when it does not exist). */
static Oid
dl_pg_rel_owner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner = InvalidOid;

	if (HeapTupleIsValid(tup))
	{
		owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
		ReleaseSysCache(tup);
	}
	return owner;
}

/* The relations other than self that object classid/objid depends on. */
static List *
dl_pg_relations_used(Oid classid, Oid objid, Oid self)
{
	Relation	dep = table_open(DependRelationId, AccessShareLock);
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *rels = NIL;

	ScanKeyInit(&key[0], Anum_pg_depend_classid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(classid));
	ScanKeyInit(&key[1], Anum_pg_depend_objid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(objid));
	scan = systable_beginscan(dep, DependDependerIndexId, true, NULL, 2, key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_depend d = (Form_pg_depend) GETSTRUCT(tup);

		if (d->refclassid == RelationRelationId && d->refobjid != self)
			rels = list_append_unique_oid(rels, d->refobjid);
	}
	systable_endscan(scan);
	table_close(dep, AccessShareLock);
	return rels;
}

/*
 * The objects (classid, objid pairs, palloc'd) that hang on relid and
 * run code when it is read (for_write false) or written (for_write).
 */
static List *
attached_objects(Oid relid, bool for_write)
{
	Relation	dep = table_open(DependRelationId, AccessShareLock);
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *objs = NIL;

	ScanKeyInit(&key[0], Anum_pg_depend_refclassid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(RelationRelationId));
	ScanKeyInit(&key[1], Anum_pg_depend_refobjid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(dep, DependReferenceIndexId, true, NULL, 2, key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_depend d = (Form_pg_depend) GETSTRUCT(tup);

		if (d->classid == PolicyRelationId
			|| (d->classid == RewriteRelationId && get_rel_relkind(relid) == RELKIND_VIEW)
			|| (for_write && (d->classid == TriggerRelationId || d->classid == RewriteRelationId
							  || d->classid == AttrDefaultRelationId || d->classid == ConstraintRelationId
							  || (d->classid == RelationRelationId && d->objid != relid))))
		{
			Oid		   *o = palloc(sizeof(Oid) * 2);

			o[0] = d->classid;
			o[1] = d->objid;
			objs = lappend(objs, o);
		}
	}
	systable_endscan(scan);
	table_close(dep, AccessShareLock);
	return objs;
}

static void dl_pg_require_trusted_attached(Oid relid, const char *label, bool for_write, int depth);

/*
 * Check the object o (classid, objid) attached to relid with
 * dl_pg_require_trusted_deps; for a view's rule, the policies of the
 * relations it reads too.
 */
static void
require_trusted_object(Oid relid, const char *label, const Oid *o, int depth)
{
	const char *kind = o[0] == PolicyRelationId ? "row-security policy"
		: o[0] == TriggerRelationId ? "trigger"
		: o[0] == RewriteRelationId ? "rule"
		: o[0] == AttrDefaultRelationId ? "column default"
		: o[0] == ConstraintRelationId ? "constraint" : "index";

	/*
	 * A view of the caller's (or a superuser's) runs the code its owner
	 * chose: the way to cast another role's column to a built-in type.
	 */
	if (o[0] != RewriteRelationId || !dl_pg_owner_trusted(dl_pg_rel_owner(relid)))
		dl_pg_require_trusted_deps(o[0], o[1], label, kind);
	/* a view: the policies of the relations it reads apply too */
	if (o[0] == RewriteRelationId && depth < 8)
	{
		List	   *rels = dl_pg_relations_used(RewriteRelationId, o[1], relid);
		ListCell   *rc;

		foreach(rc, rels)
			dl_pg_require_trusted_attached(lfirst_oid(rc), dl_pg_relation_sql_name(lfirst_oid(rc)),
										   false, depth + 1);
	}
}

/* ERROR 42501 for a trigger of relid that calls a function of another role, even a trusted one. */
static void
require_trusted_triggers(Oid relid, const char *label)
{
	Relation	rel = table_open(relid, AccessShareLock);

	if (rel->trigdesc != NULL)
		for (int i = 0; i < rel->trigdesc->numtriggers; i++)
		{
			Trigger    *tg = &rel->trigdesc->triggers[i];
			char	   *what = NULL;
			Oid			owner = InvalidOid;

			if (tg->tgisinternal)
				continue;
			if (!dl_pg_ref_trusted(ProcedureRelationId, tg->tgfoid, &what, &owner))
				ereport(ERROR,
						(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						 errmsg("table %s has a trigger %s that calls %s, owned by role %s: madlib_dl runs no other role's code",
								label, quote_identifier(tg->tgname), what, dl_pg_role_label(owner)),
						 errhint("Give a table of your own without it (docs/security.md).")));
		}
	table_close(rel, AccessShareLock);
}

/*
 * The objects that hang on relid and run code when it is read
 * (for_write false: row-security policies; the query of a view of an
 * untrusted owner, and the policies of the relations a view reads) or written (for_write: also
 * triggers, rules, defaults and generated columns, CHECK constraints,
 * index expressions and predicates), each checked with
 * dl_pg_require_trusted_deps.  A trigger's function is a dependency of the
 * trigger, so it is checked with them.
 */
static void
dl_pg_require_trusted_attached(Oid relid, const char *label, bool for_write, int depth)
{
	List	   *objs = attached_objects(relid, for_write);
	ListCell   *lc;

	foreach(lc, objs)
		require_trusted_object(relid, label, lfirst(lc), depth);
	/* a trigger of another role, even on a trusted function */
	if (for_write)
		require_trusted_triggers(relid, label);
}

void
dl_pg_require_trusted_table(Oid relid, const char *what)
{
	HeapTuple	tup;
	char	   *label;
	int			natts;

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid),
				 errhint("Give %s.", what != NULL ? what : "an existing table")));
	natts = ((Form_pg_class) GETSTRUCT(tup))->relnatts;
	ReleaseSysCache(tup);
	label = dl_pg_relation_sql_name(relid);
	/* privileges first, so that a role without them cannot hold a lock */
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK
		&& pg_attribute_aclcheck_all(relid, GetUserId(), ACL_SELECT, ACLMASK_ANY) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", label),
				 errhint("Ask the table's owner for SELECT on it.")));
	LockRelationOid(relid, AccessShareLock);
	for (AttrNumber a = 1; a <= natts; a++)
	{
		HeapTuple	atup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(a));
		Form_pg_attribute att;
		Oid			owner = InvalidOid;
		Oid			bad;

		if (!HeapTupleIsValid(atup))
			continue;
		att = (Form_pg_attribute) GETSTRUCT(atup);
		if (att->attisdropped)
		{
			ReleaseSysCache(atup);
			continue;
		}
		bad = dl_pg_untrusted_type(att->atttypid, &owner);
		if (OidIsValid(bad))
		{
			char	   *col = pstrdup(NameStr(att->attname));
			char	   *coltype = format_type_be(att->atttypid);

			ReleaseSysCache(atup);
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("column %s of table %s has type %s, owned by role %s: madlib_dl reads no type of another role",
							quote_identifier(col), label,
							bad == att->atttypid ? coltype : psprintf("%s (through %s)", coltype, format_type_be(bad)),
							dl_pg_role_label(owner)),
					 errdetail("Its input, output, casts, operators and checks would run as %s.",
							   dl_pg_role_label(GetUserId())),
					 errhint(DL_TRUST_HINT_READ)));
		}
		ReleaseSysCache(atup);
	}
	dl_pg_require_trusted_attached(relid, label, false, 0);
}

void
dl_pg_require_writable_table(Oid relid, const char *what)
{
	HeapTuple	tup;
	Oid			owner;
	char	   *label;

	dl_pg_require_trusted_table(relid, what);
	label = dl_pg_relation_sql_name(relid);
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	if (owner != GetUserId())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("table %s is owned by role %s: madlib_dl writes only into tables of the calling role (%s)",
						label, dl_pg_role_label(owner), dl_pg_role_label(GetUserId())),
				 errdetail("Its owner's triggers, rules and defaults would run as %s.",
						   dl_pg_role_label(GetUserId())),
				 errhint("Give a table that does not exist yet, which madlib_dl creates, or one of your own (docs/security.md).")));
	dl_pg_require_trusted_attached(relid, label, true, 0);
}

/*
 * The column checks of a table C reads (they end in the trust check above,
 * so they live here, not in pg_util.c, which pg_trust.c calls).
 */
void
dl_pg_require_columns(Oid relid, const DlPgColumn *cols, int n, const char *what)
{
	char		kind = get_rel_relkind(relid);
	char	   *label;
	bool		table_ok;

	if (kind == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid),
				 errhint("Give %s.", what)));
	label = dl_pg_relation_sql_name(relid);
	if (kind != RELKIND_RELATION && kind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s is not a table", label),
				 errhint("Give %s.", what)));
	/* privileges first, so that a role without them cannot hold a lock */
	table_ok = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK;
	for (int i = 0; i < n; i++)
	{
		AttrNumber	att = get_attnum(relid, cols[i].name);

		if (att == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("table %s has no column %s", label, quote_identifier(cols[i].name)),
					 errhint("Give %s.", what)));
		if (!table_ok && pg_attribute_aclcheck(relid, att, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied for table %s", label),
					 errhint("Ask the table's owner for SELECT on it.")));
	}
	LockRelationOid(relid, AccessShareLock);
	/* every column of a trusted type, no policy of another role's code */
	dl_pg_require_trusted_table(relid, what);
	for (int i = 0; i < n; i++)
	{
		AttrNumber	att = get_attnum(relid, cols[i].name);
		Oid			type;
		int32		typmod;
		Oid			coll;

		if (att == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("table %s has no column %s", label, quote_identifier(cols[i].name)),
					 errhint("Give %s.", what)));
		get_atttypetypmodcoll(relid, att, &type, &typmod, &coll);
		if (type != cols[i].type)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %s of table %s has type %s, not %s",
							quote_identifier(cols[i].name), label,
							format_type_be(type), format_type_be(cols[i].type)),
					 errhint("Give %s.", what)));
	}
}

void
dl_pg_require_packed_table(Oid relid, const char *x_col, const char *y_col)
{
	DlPgColumn	cols[6] = {
		{x_col, BYTEAOID},
		{y_col, BYTEAOID},
		{psprintf("%s_shape", x_col), INT4ARRAYOID},
		{psprintf("%s_shape", y_col), INT4ARRAYOID},
		{"buffer_id", INT4OID},
		{"__dist_key__", INT4OID},
	};
	int			n = get_attnum(relid, "__dist_key__") != InvalidAttrNumber ? 6 : 5;

	dl_pg_require_columns(relid, cols, n, "a table made by training_preprocessor_dl or validation_preprocessor_dl");
}
