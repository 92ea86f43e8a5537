/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue-schema.c — the job queue's tables in the central manager's
 * database (queue_schema(), queue.h): the steps after the accounts' own
 * (accounting/store.c, version 1), in the one sequence of versions the
 * file has. A step is never edited once released: databases in the field
 * went through it; a later release appends the next version.
 */
#include "queue-internal.h"

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

static const AcctSchemaStep steps[] = {
        /* 1 -> 2: the job queue. A cluster's shared attributes are stored
         * once (queue_clusters.ad), each proc's own attributes in its row
         * (queue_jobs.ad), both as classad_unparse() writes them; claim and
         * slot are the claim a job runs under (never shown in its ad). The
         * history keeps the whole ad of each job that left the queue, with
         * the time it left (for HISTORY_DURATION). queue_meta holds
         * next_cluster, the next cluster id to give. */
        { 2, "CREATE TABLE queue_clusters ("
             "  id INTEGER PRIMARY KEY NOT NULL,"
             "  ad TEXT NOT NULL"
             ");"
             "CREATE TABLE queue_jobs ("
             "  cluster INTEGER NOT NULL,"
             "  proc INTEGER NOT NULL,"
             "  ad TEXT NOT NULL,"
             "  claim TEXT,"
             "  slot TEXT,"
             "  PRIMARY KEY (cluster, proc)"
             ") WITHOUT ROWID;"
             "CREATE TABLE queue_history ("
             "  cluster INTEGER NOT NULL,"
             "  proc INTEGER NOT NULL,"
             "  left_at REAL NOT NULL,"
             "  ad TEXT NOT NULL,"
             "  PRIMARY KEY (cluster, proc)"
             ") WITHOUT ROWID;"
             "CREATE INDEX queue_history_left ON queue_history (left_at, cluster, proc);"
             "CREATE TABLE queue_meta ("
             "  key TEXT PRIMARY KEY NOT NULL,"
             "  value INTEGER NOT NULL"
             ") WITHOUT ROWID;" },
        /* 2 -> 3: the submissions' ids (queue-submitid.c): the cluster each
         * (user, id) made and how many procs, written in the submit's
         * transaction, so that a submission sent again (its answer lost)
         * gets the first answer; at is when, for forgetting them. */
        { 3, "CREATE TABLE queue_submits ("
             "  user TEXT NOT NULL,"
             "  id TEXT NOT NULL,"
             "  cluster INTEGER NOT NULL,"
             "  procs INTEGER NOT NULL,"
             "  at REAL NOT NULL,"
             "  PRIMARY KEY (user, id)"
             ") WITHOUT ROWID;"
             "CREATE INDEX queue_submits_at ON queue_submits (at);" },
        /* 3 -> 4: the job event log's outbox (queue-userlog.c): each event
         * of a job with a UserLog, made in the transaction of the change
         * that caused it, until the job's submit agent (machine, its
         * SubmitMachine) appended it to path as owner. seq orders them and
         * is never given twice (AUTOINCREMENT). */
        { 4, "CREATE TABLE queue_userlog ("
             "  seq INTEGER PRIMARY KEY AUTOINCREMENT,"
             "  cluster INTEGER NOT NULL,"
             "  proc INTEGER NOT NULL,"
             "  machine TEXT NOT NULL,"
             "  owner TEXT NOT NULL,"
             "  path TEXT NOT NULL,"
             "  text TEXT NOT NULL"
             ");" },
};

static const AcctSchema schema = { steps, ELEMENTSOF(steps) };

const AcctSchema *queue_schema(void) {
        return &schema;
}
