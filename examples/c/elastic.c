/* An HSDP training loop that loses a rank, in C: it finishes without it
 * (shrink mode) or gets the whole mesh back (repair mode). The C++
 * example_elastic.cpp explains the loop.
 *
 *   mpirun --with-ft ulfm -n 8 example_c_elastic [shrink] [STEPS] [VICTIM] [DEATH_STEP]
 *   mpirun --with-ft ulfm -n 8+SPARES example_c_elastic repair [STEPS] [VICTIM] [DEATH_STEP]
 *
 * A (replicate=4, shard=2) mesh made with fault_tolerance; at DEATH_STEP
 * rank VICTIM dies. The survivors' collectives return
 * DEVMESH_ERR_PROC_FAILED or DEVMESH_ERR_REVOKED.
 * Shrink (the default): they shrink the mesh along replicate, agree on the
 * earliest step a survivor failed and redo it (a rank that had completed
 * it goes back); the dead rank's partner becomes a spare.
 * Repair: the job's last SPARES ranks (its size minus 8) stand by
 * (devmesh_standby); the survivors call devmesh_repair, which gives the
 * dead rank's root index to a spare or, when none is left, to this program
 * spawned with the argument `join` (it calls devmesh_join). Every
 * survivor keeps its root index; they agree on the step to resume at, the
 * newcomer gets the parameters by a broadcast along replicate from a
 * surviving replica, and the (4, 2) mesh goes on. At the end the members
 * release the spares no repair took (devmesh_release_spares).
 * Each process that finishes checks its parameters against the closed form
 * and prints one line (a released spare says so). Repair spawns by the
 * program's path: start it by an absolute path. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devmesh/devmesh.h"

#define PARAMS 1024
/* A status of this program's own: no surviving replica holds a shard's
 * parameters (every process of one shard died). */
#define NO_REPLICA (-1)

/* One step: the shard's gradient sum, averaged over the replicas. */
static int step(devmesh_t mesh, int s, double w[]) {
  static double grad[PARAMS], sum[PARAMS];
  int coord[2], replicas = 0, rc;
  if ((rc = devmesh_coordinate(mesh, 2, coord)) != DEVMESH_SUCCESS) return rc;
  for (int i = 0; i < PARAMS; ++i) grad[i] = (s + 1) * (coord[1] + 1);
  rc = devmesh_allreduce(mesh, "shard", grad, sum, PARAMS, DEVMESH_FLOAT64, DEVMESH_SUM, NULL);
  if (rc == DEVMESH_SUCCESS)
    rc = devmesh_allreduce(mesh, "replicate", sum, grad, PARAMS, DEVMESH_FLOAT64, DEVMESH_SUM, NULL);
  if (rc == DEVMESH_SUCCESS) rc = devmesh_size(mesh, "replicate", &replicas);
  if (rc != DEVMESH_SUCCESS) return rc;
  for (int i = 0; i < PARAMS; ++i) w[i] -= 0.01 * grad[i] / replicas;
  return DEVMESH_SUCCESS;
}

/* The closed form of a run with no failure. */
static int correct(const double w[], int steps) {
  double want = 1.0;
  for (int s = 0; s < steps; ++s) want -= 0.01 * 3 * (s + 1);
  int ok = 1;
  for (int i = 0; i < PARAMS; ++i) ok = ok && fabs(w[i] - want) < 1e-9;
  return ok;
}

static int failure(int rc) { return rc == DEVMESH_ERR_PROC_FAILED || rc == DEVMESH_ERR_REVOKED; }

/* *first: the earliest of the members' steps s (a minimum along both dims
 * is one over the mesh). */
static int earliest(devmesh_t mesh, int s, int *first) {
  int along = s;
  int rc = devmesh_allreduce(mesh, "replicate", &s, &along, 1, DEVMESH_INT32, DEVMESH_MIN, NULL);
  if (rc == DEVMESH_SUCCESS) rc = devmesh_allreduce(mesh, "shard", &along, first, 1, DEVMESH_INT32, DEVMESH_MIN, NULL);
  return rc;
}

static int fail(const char *who, const char *what, int rc) {
  if (rc == NO_REPLICA)
    fprintf(stderr, "%s: %s: no surviving replica holds this shard's parameters\n", who, what);
  else
    fprintf(stderr, "%s: %s: %s (%s)\n", who, what, devmesh_status_string(rc), devmesh_last_error());
  return 1;
}

static int shrink_mode(int rank, int steps, int victim, int death) {
  char who[32];
  snprintf(who, sizeof who, "rank %d", rank);
  devmesh_config_t config = DEVMESH_CONFIG_INITIALIZER;
  config.fault_tolerance = 1;
  const int shape[] = {4, 2};
  const char *names[] = {"replicate", "shard"};
  devmesh_t mesh = NULL;
  int rc = devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, &config, &mesh);
  if (rc != DEVMESH_SUCCESS) return fail(who, "devmesh_create_ex", rc);

  /* w: the parameters; last: w before the last step this rank completed. */
  static double w[PARAMS], last[PARAMS], before[PARAMS];
  for (int i = 0; i < PARAMS; ++i) w[i] = last[i] = 1.0;
  int shrinks = 0;
  for (int s = 0; s < steps;) {
    if (s == death && rank == victim) raise(SIGKILL);
    memcpy(before, w, sizeof w);
    rc = step(mesh, s, w); /* w changes only once both allreduces succeeded */
    if (rc == DEVMESH_SUCCESS) {
      memcpy(last, before, sizeof w);
      ++s;
      continue;
    }
    if (!failure(rc)) return fail(who, "a step", rc);
    /* Every survivor gets here: shrink along replicate. */
    devmesh_t smaller = NULL;
    if ((rc = devmesh_shrink(mesh, "replicate", &smaller)) != DEVMESH_SUCCESS) return fail(who, "devmesh_shrink", rc);
    int failed[8], nfailed = 0;
    if ((rc = devmesh_failed_ranks(mesh, 8, failed, &nfailed)) != DEVMESH_SUCCESS)
      return fail(who, "devmesh_failed_ranks", rc);
    devmesh_destroy(&mesh); /* revoked, still destroyed cleanly */
    if (!smaller) {
      printf("rank %d: spare after the shrink (failed root indices:", rank);
      for (int i = 0; i < nfailed; ++i) printf(" %d", failed[i]);
      printf(")\n");
      return 0;
    }
    /* A collective can complete on some members and fail on others, so
     * survivors may be a step apart: the earliest step a survivor failed is
     * redone by all, and a rank that completed it goes back to its
     * parameters before it. */
    int first = s;
    if ((rc = earliest(smaller, s, &first)) != DEVMESH_SUCCESS) return fail(who, "agreeing on the step", rc);
    if (first < s) {
      memcpy(w, last, sizeof w);
      s = first;
    }
    mesh = smaller;
    ++shrinks;
  }
  int replicas = 0, shards = 0;
  devmesh_size(mesh, "replicate", &replicas);
  devmesh_size(mesh, "shard", &shards);
  const int ok = correct(w, steps);
  printf("rank %d: finished %d steps on a (%d, %d) mesh after %d shrink(s), parameters %s\n", rank, steps, replicas,
         shards, shrinks, ok ? "correct" : "WRONG");
  devmesh_destroy(&mesh);
  return ok ? 0 : 1;
}

/* Repair mode: one process's training state. A newcomer (a spare a repair
 * took, a spawned process) holds no parameters until it catches up. */
typedef struct {
  devmesh_t mesh;
  double w[PARAMS], last[PARAMS];
  int have_w, s, repairs;
  char *command;       /* what a repair spawns: this program, */
  char *spawn_argv[3]; /* with "join" STEPS */
} training;

/* After a repair: every member goes back to the earliest step a holder of
 * parameters failed, and the newcomers get the parameters from a surviving
 * replica: a broadcast along replicate from its lowest member that holds
 * them. */
static int catch_up(training *t) {
  int first = 0, rc = earliest(t->mesh, t->have_w ? t->s : INT_MAX, &first);
  if (rc != DEVMESH_SUCCESS) return rc;
  if (t->have_w && first < t->s) memcpy(t->w, t->last, sizeof t->w);
  t->s = first;
  int mine = INT_MAX, root = INT_MAX;
  if (t->have_w && (rc = devmesh_local_rank(t->mesh, "replicate", &mine)) != DEVMESH_SUCCESS) return rc;
  rc = devmesh_allreduce(t->mesh, "replicate", &mine, &root, 1, DEVMESH_INT32, DEVMESH_MIN, NULL);
  if (rc != DEVMESH_SUCCESS) return rc;
  if (root == INT_MAX) return NO_REPLICA;
  rc = devmesh_broadcast(t->mesh, "replicate", t->w, PARAMS, DEVMESH_FLOAT64, root, NULL);
  if (rc != DEVMESH_SUCCESS) return rc;
  t->have_w = 1;
  memcpy(t->last, t->w, sizeof t->w);
  return DEVMESH_SUCCESS;
}

/* Repairs (spares first, then a spawn) until the repaired mesh has caught
 * up; a death during the repair or the catch-up: repair again. The mesh a
 * repair replaced is destroyed (revoked, still destroyed cleanly). */
static int recover(training *t) {
  int rc;
  do {
    devmesh_t repaired = NULL;
    rc = devmesh_repair(t->mesh, t->command, t->spawn_argv, &repaired);
    if (rc != DEVMESH_SUCCESS) continue;
    devmesh_destroy(&t->mesh);
    t->mesh = repaired;
    ++t->repairs;
    rc = catch_up(t);
  } while (failure(rc));
  return rc;
}

static int train(training *t, int steps, int victim, int death) {
  static double before[PARAMS];
  int rc;
  while (t->s < steps) {
    if (t->s == death && victim) raise(SIGKILL);
    memcpy(before, t->w, sizeof before);
    rc = step(t->mesh, t->s, t->w); /* w changes only once both allreduces succeeded */
    if (rc == DEVMESH_SUCCESS) {
      memcpy(t->last, before, sizeof before);
      ++t->s;
    } else if (!failure(rc) || (rc = recover(t)) != DEVMESH_SUCCESS) {
      return rc;
    }
  }
  return devmesh_release_spares(t->mesh);
}

/* mode "repair": a member or a spare of MPI_COMM_WORLD; "join": a process
 * a repair spawned. Its line names it by how it started (member, spare or
 * spawned) and its world rank. */
static int repair_mode(const char *mode, char *program, int steps, int victim, int death) {
  static training t;
  char who[32], steps_text[16];
  int rank = 0, size = 0, rc;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < PARAMS; ++i) t.w[i] = t.last[i] = 1.0;
  t.have_w = 1;
  snprintf(steps_text, sizeof steps_text, "%d", steps);
  t.command = program;
  t.spawn_argv[0] = "join";
  t.spawn_argv[1] = steps_text;
  t.spawn_argv[2] = NULL;
  snprintf(who, sizeof who, "member %d", rank);
  if (strcmp(mode, "join") == 0) {
    snprintf(who, sizeof who, "spawned %d", rank);
    if ((rc = devmesh_join(&t.mesh)) != DEVMESH_SUCCESS) return fail(who, "devmesh_join", rc);
  } else {
    devmesh_config_t config = DEVMESH_CONFIG_INITIALIZER;
    config.fault_tolerance = 1;
    config.spares = size - 8;
    const int shape[] = {4, 2};
    const char *names[] = {"replicate", "shard"};
    if ((rc = devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, &config, &t.mesh)) != DEVMESH_SUCCESS)
      return fail(who, "devmesh_create_ex", rc);
    if (!t.mesh) {
      /* A spare could load the model here, before it stands by. */
      snprintf(who, sizeof who, "spare %d", rank);
      if ((rc = devmesh_standby(MPI_COMM_WORLD, &t.mesh)) != DEVMESH_SUCCESS) return fail(who, "devmesh_standby", rc);
      if (!t.mesh) {
        printf("%s: released, no repair needed it\n", who);
        return 0;
      }
    }
  }
  const int member = strncmp(who, "member", 6) == 0;
  if (!member) {
    /* A newcomer: the repair that took it is its first. */
    t.have_w = 0;
    t.repairs = 1;
    rc = catch_up(&t);
    if (failure(rc)) rc = recover(&t);
    if (rc != DEVMESH_SUCCESS) return fail(who, "catching up", rc);
  }
  if ((rc = train(&t, steps, member && rank == victim, death)) != DEVMESH_SUCCESS) return fail(who, "training", rc);
  int replicas = 0, shards = 0, index = -1;
  devmesh_size(t.mesh, "replicate", &replicas);
  devmesh_size(t.mesh, "shard", &shards);
  devmesh_root_index(t.mesh, &index);
  const int ok = correct(t.w, steps);
  printf("%s: finished %d steps on a (%d, %d) mesh at root index %d after %d repair(s), parameters %s\n", who, steps,
         replicas, shards, index, t.repairs, ok ? "correct" : "WRONG");
  devmesh_destroy(&t.mesh);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  /* An optional first argument names the mode: shrink (the default),
   * repair, or join (a process a repair spawned). */
  const char *mode = "shrink";
  int a = 1;
  if (argc > 1 && (argv[1][0] < '0' || argv[1][0] > '9')) mode = argv[a++];
  const int steps = argc > a ? atoi(argv[a]) : 10;
  const int victim = argc > a + 1 ? atoi(argv[a + 1]) : 5;
  const int death = argc > a + 2 ? atoi(argv[a + 2]) : steps / 2;
  int status;
  if (strcmp(mode, "repair") == 0 || strcmp(mode, "join") == 0) {
    /* The path a repair spawns: this program's, absolute where it can be. */
    char *program = realpath(argv[0], NULL);
    status = repair_mode(mode, program ? program : argv[0], steps, victim, death);
    free(program);
  } else if (strcmp(mode, "shrink") == 0) {
    status = shrink_mode(rank, steps, victim, death);
  } else {
    if (rank == 0) fprintf(stderr, "unknown mode '%s': shrink, repair or join\n", mode);
    status = 2;
  }
  fflush(stdout);
  MPI_Finalize();
  return status;
}
