/*
 * The device side of a case's run on CUDA: every block of the case
 * (check_case.h), guards included, to the device before enqueue and back
 * into its host mirror after it, plainly or behind a busy stream (the
 * gate of the stream check). check_transfer.c says how and why.
 */
#ifndef PLUGRT_TOOLS_CHECK_TRANSFER_H
#define PLUGRT_TOOLS_CHECK_TRANSFER_H

#include "check_case.h"

/* Before enqueue on CUDA: every block of k, as its mirror holds it, to the
 * device, on c->stream (made on first use); with c->gated, behind a busy
 * stream with decoy inputs (check_transfer.c says how). 0, or -1 with what
 * the device said in why. */
int chk_dev_before(chk_ctx *c, chk_case *k, char *why, size_t cap);
/* After enqueue: waits for the stream (and with c->device_sync the whole
 * device) and copies every block back into its mirror. 0, or -1 with why. */
int chk_dev_after(chk_ctx *c, chk_case *k, char *why, size_t cap);

/* Bytes of each of the gate's CHK_GATE_COPIES copies: CHK_GATE_BYTES, or
 * less where the device had no room for that; 0 before the first gated
 * run. */
size_t chk_dev_gate_bytes(void);

#endif /* PLUGRT_TOOLS_CHECK_TRANSFER_H */
