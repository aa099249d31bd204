/*-------------------------------------------------------------------------
 *
 * plan.h
 *	  Internal: how the executor runs a graph (plan.c).
 *
 * IDENTIFICATION
 *	  src/engine/plan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PLAN_H
#define PLAN_H

#include <stdbool.h>

#include "madlib_dl/dl_spec.h"

/*
 * Fill every layer's plan and the spec's arena sizes (dl_layer.h,
 * dl_spec.h).  Called by dl_model_spec_finalize once the layers' shapes
 * are known; cannot fail.
 */
void		dl_spec_plan(DlModelSpec *spec);

/*
 * Whether l's forward output is its input itself (Flatten, a linear
 * Activation, a Dropout without a mask): the layer has no output buffer.
 */
bool		dl_plan_forward_aliases(const DlLayer *l, bool training);

/*
 * Whether l's backward turns dy into dx in dy's own buffer (Flatten,
 * Activation, a Dropout without a mask), which then becomes the gradient
 * of its input when that input has none yet.
 */
bool		dl_plan_grad_in_place(const DlLayer *l);

#endif							/* PLAN_H */
