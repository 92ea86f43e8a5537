/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * glean-messages.h — the MESSAGE_IDs of the journal records operators
 * search for (`journalctl MESSAGE_ID=...`), every one of both daemons,
 * beside glean.catalog, which explains each (tests/install/test-install
 * checks that every id here has its entry there, and the other way round).
 */

/* glean-agent */
#define MESSAGE_ID_TRANSITION "5e3c0b7a4d2f4e61a8c9f0d1b2e3a4c5"   /* a slot's state transition */
#define MESSAGE_ID_SLOT_BROKEN "b6f1d2c84e7a4f0e9c3d5a1b7e2f8c40"  /* a slot that broke */

/* glean-negotiator */
#define MESSAGE_ID_CYCLE "4b9816ea21d6487b9c5e822b918233d2"
#define MESSAGE_ID_MATCH "53a49e3e2837443e89d920f808cf4d26"
#define MESSAGE_ID_CLAIM "a8683bfd84dc4fbab6fd87c33f032b58"
#define MESSAGE_ID_JOB_START "4ba82fda19a3446b976d4222ebff735f"
#define MESSAGE_ID_JOB_EXIT "79708057343948b6a9085fae941088f5"
#define MESSAGE_ID_JOB_HOLD "f1a8a5c2f5e44ccf8b1834a614409bc6"
#define MESSAGE_ID_JOB_REQUEUE "b5baaab6f57a4cb3ae65e3b0e7487af7"
#define MESSAGE_ID_PREEMPT "62497c7bef33423d81efdda52f9b1e76"
#define MESSAGE_ID_CLAIM_END "36d7203f8c8340bf8d6e2574601a0858"
#define MESSAGE_ID_REFUSED "10a6c2c7f9594405843c081b72d395d6"
