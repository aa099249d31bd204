/*-------------------------------------------------------------------------
 *
 * caps.c
 *	  Size caps on parsed text and json-c's memory estimate (dl_caps.h).
 *
 * IDENTIFICATION
 *	  src/engine/caps.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "madlib_dl/dl_caps.h"

DlStatus
dl_text_check_cap(const char *what, size_t len, size_t cap, DlError *err)
{
	if (len <= cap)
		return DL_OK;
	dl_error_set(err, DL_ERR_LIMIT, "%s of %zu bytes is longer than the limit of %zu bytes",
				 what, len, cap);
	dl_error_hint(err, "madlib_dl parses at most %zu bytes (%zu KiB) of %s; "
				  "docs/security.md lists the size caps.", cap, cap >> 10, what);
	return DL_ERR_LIMIT;
}

/*
 * What json-c 0.16 allocates per value on x86-64 with glibc, measured
 * (mallinfo2 before and after json_tokener_parse_ex of 300,000 values of
 * one kind) and rounded up: an object 792 bytes (a 16-entry hash table),
 * a member 165 bytes beyond its value (its entry, the key's copy, the
 * table's doubling), an array 152 bytes (32 slots), a number, true or
 * false 72 to 104, a string 88 plus its length; an array's element
 * beyond 32 up to 16 bytes (its doubling slot array).
 */
#define JSON_COST_OBJECT	832
#define JSON_COST_MEMBER	176
#define JSON_COST_ARRAY		176
#define JSON_COST_SCALAR	112
#define JSON_COST_STRING	96
#define JSON_COST_ELEMENT	16

size_t
dl_json_heap_estimate(const char *json, size_t len, size_t limit)
{
	size_t		total = 0;
	size_t		i = 0;

	while (i < len)
	{
		unsigned char c = (unsigned char) json[i];

		if (total > limit)
			return total;
		switch (c)
		{
			case '{':
				total += JSON_COST_OBJECT;
				i++;
				break;
			case '[':
				total += JSON_COST_ARRAY;
				i++;
				break;
			case ':':
				total += JSON_COST_MEMBER;
				i++;
				break;
			case ',':
				total += JSON_COST_ELEMENT;
				i++;
				break;
			case '"':
				{
					size_t		b = ++i;

					while (i < len && json[i] != '"')
						i += json[i] == '\\' ? 2 : 1;
					total += JSON_COST_STRING + (i - b);
					i++;
				}
				break;
			case '}':
			case ']':
			case ' ':
			case '\t':
			case '\n':
			case '\r':
				i++;
				break;
			default:
				/* a number, true, false, null, or junk json-c refuses */
				total += JSON_COST_SCALAR;
				while (i < len && json[i] != ',' && json[i] != ']' && json[i] != '}' &&
					   json[i] != ':' && json[i] != '"' && json[i] != '{' && json[i] != '[' &&
					   json[i] != ' ' && json[i] != '\n' && json[i] != '\t' && json[i] != '\r')
					i++;
				break;
		}
	}
	return total;
}
