/*
 * Input specs for `plugrt check --inputs` (and "@inputs" in the fields
 * file): what a plugin takes, where discovery cannot guess it.
 *
 *   data:float32:Nx8,ids:int32:N,N=1..512
 *
 * Comma-separated items. NAME:DTYPE:DIMS is one input, in order: DIMS are
 * separated by 'x' (so a symbol cannot hold a lowercase x), each a
 * literal (8) or a symbol (N, Batch, D_1), a symbol standing for the same
 * dim wherever it appears; empty DIMS (or "scalar") is a 0-D input.
 * SYMBOL=LO..HI bounds a symbol (SYMBOL=V fixes it); a symbol without
 * bounds is drawn from 1 up to the checker's cap. Profiles start at 1
 * even where LO is 0; the empty-inputs check makes a dim 0 only where it
 * is a symbol without bounds or with LO 0 (it is skipped, saying so, when
 * no input can be empty). Spaces are ignored. Shape inputs cannot be
 * given.
 */
#ifndef PLUGRT_TOOLS_CHECK_SPEC_H
#define PLUGRT_TOOLS_CHECK_SPEC_H

#include "check.h"

/* Parses `text` into sig (rel CHK_REL_SPEC). 0, or -1 with the reason in
 * why, naming the item. */
int chk_spec_parse(const char *text, chk_sig *sig, char *why, size_t cap);

#endif /* PLUGRT_TOOLS_CHECK_SPEC_H */
