/* Communicator ids for the trace: one value every member of a communicator
 * shares. Handles need not agree between ranks (MPICH gives one rank an
 * internal communicator more than another, so the program's next handle
 * differs), and the replay matches messages and collectives by communicator.
 *
 * MPI_COMM_WORLD and MPI_COMM_SELF keep their handles, the same on every
 * rank. A communicator a wrapped constructor makes (while tracing) gets
 *     derive(parent's id, n, members)
 * where members hashes its members' world ranks in its rank order and n
 * counts the earlier creations on that parent that gave that same membership.
 * Every member of the new communicator saw those creations in one order (each
 * was collective over the parent, or over that very group for
 * MPI_Comm_create_group), so all compute the same id without a message; a
 * split's colours differ in their members. An intercommunicator's two groups
 * have different parents: they agree through one Allreduce of 8 bytes over it.
 * An intracommunicator's members (world ranks, in its rank order) go into the
 * trace once per member rank, so a replay can map its ranks to world ranks.
 * Ids so made lie in [DERIVED_BASE, DERIVED_BASE + DERIVED_MASK], where no
 * MPICH communicator handle lies (those have one of the top two bits set).
 * Handles of communicators made otherwise (MPI_Comm_spawn, connect/accept,
 * the MPI-4 *_from_group calls) are recorded as before. Format:
 * docs/trace-format.md. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "pmpi.h"

#define DERIVED_BASE 0x20000000u
#define DERIVED_MASK 0x1fffffffu

/* ---- hashing ---- */

static uint64_t mix(uint64_t x)
{
    /* splitmix64's finaliser: every input bit moves every output bit */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t combine(uint64_t h, uint64_t v)
{
    return mix(h ^ mix(v + 0x9e3779b97f4a7c15ull));
}

/* ---- the ids ---- */

/* Values filed under LOGGP_REQ_RECV_POSTED: the tables' plain-value kind. */
static loggp_table ids = LOGGP_TABLE_INIT(0);    /* handle -> id */
static loggp_table counts = LOGGP_TABLE_INIT(0); /* (parent id, members) -> creations so far */
static MPI_Group world_group; /* valid once have_world_group */
static int have_world_group;
static atomic_flag world_group_lock = ATOMIC_FLAG_INIT;

/* MPI_COMM_WORLD's group, made once (threads may make communicators at once). */
static int get_world_group(void)
{
    while (atomic_flag_test_and_set_explicit(&world_group_lock, memory_order_acquire))
        ;
    if (!have_world_group)
        have_world_group = pmpi.Comm_group(MPI_COMM_WORLD, &world_group) == MPI_SUCCESS;
    int ok = have_world_group;
    atomic_flag_clear_explicit(&world_group_lock, memory_order_release);
    return ok;
}

static uint64_t handle_key(MPI_Comm comm)
{
    uint64_t key = 0;
    memcpy(&key, &comm, sizeof comm < sizeof key ? sizeof comm : sizeof key);
    return key;
}

/* The handle as 32 bits: MPICH's integer handle; Open MPI's Fortran index (its handles are pointers). */
static uint32_t handle_id(MPI_Comm comm)
{
#ifdef OPEN_MPI
    static MPI_Fint (*_Atomic to_fortran)(MPI_Comm);
    MPI_Fint (*c2f)(MPI_Comm) = to_fortran;
    if (!c2f) {
        void *f = dlsym(RTLD_DEFAULT, "PMPI_Comm_c2f");
        memcpy(&c2f, &f, sizeof f);
        to_fortran = c2f;
    }
    if (c2f)
        return (uint32_t)c2f(comm);
#endif
    return (uint32_t)handle_key(comm);
}

uint32_t loggp_derive_comm_id(uint32_t parent, uint64_t n, uint64_t members)
{
    uint64_t h = combine(combine(combine(0, parent), n), members);
    return DERIVED_BASE | (uint32_t)(h & DERIVED_MASK);
}

uint32_t loggp_comm_id(MPI_Comm comm)
{
    loggp_req_info id;
    if (comm == MPI_COMM_WORLD || !loggp_table_peek(&ids, handle_key(comm), &id))
        return handle_id(comm);
    return (uint32_t)id.bytes;
}

/* g's members' world ranks in g's rank order (malloc'd, *n of them); NULL when they cannot be
 * had (*n is then the size, or 0). */
static int *world_ranks(MPI_Group g, int *n)
{
    *n = 0;
    if (pmpi.Group_size(g, n) != MPI_SUCCESS || *n <= 0) {
        *n = 0;
        return NULL;
    }
    if (!get_world_group())
        return NULL;
    int *ranks = malloc(2 * (size_t)*n * sizeof *ranks);
    if (!ranks)
        return NULL;
    for (int i = 0; i < *n; i++)
        ranks[i] = i;
    if (pmpi.Group_translate_ranks(g, *n, ranks, world_group, ranks + *n) != MPI_SUCCESS) {
        free(ranks);
        return NULL;
    }
    memmove(ranks, ranks + *n, (size_t)*n * sizeof *ranks);
    return ranks;
}

/* A communicator's members: the hash its id is made of, and their world ranks (NULL: unknown;
 * the size alone is hashed then: ids may coincide, never disagree). in_world: every member is a
 * rank of MPI_COMM_WORLD (not so for one of a spawned job's), so the trace may list them. */
typedef struct {
    uint64_t hash;
    int n;
    int *ranks;
    int in_world;
} membership;

/* comm's members (an intercommunicator's local group only: the side this rank is on). */
static membership members_of(MPI_Comm comm)
{
    membership m = {0};
    MPI_Group g;
    if (pmpi.Comm_group(comm, &g) != MPI_SUCCESS)
        return m;
    m.ranks = world_ranks(g, &m.n);
    pmpi.Group_free(&g);
    m.hash = combine(0, (uint64_t)m.n);
    m.in_world = m.ranks != NULL;
    if (m.ranks)
        for (int i = 0; i < m.n; i++) {
            m.hash = combine(m.hash, (uint32_t)m.ranks[i]);
            m.in_world &= m.ranks[i] >= 0; /* MPI_UNDEFINED: not in MPI_COMM_WORLD */
        }
    return m;
}

/* How many communicators with these members were made on parent before this one (the
 * creations on one parent are never concurrent: MPI orders collectives on a communicator). */
static uint64_t next_count(uint32_t parent, uint64_t members)
{
    uint64_t key = combine(parent, members);
    loggp_req_info n = {0};
    if (!loggp_table_peek(&counts, key, &n))
        n.bytes = 0;
    loggp_table_put(&counts, key, LOGGP_REQ_RECV_POSTED, n.bytes + 1);
    return n.bytes;
}

static void remember(MPI_Comm comm, uint32_t id)
{
    loggp_table_put(&ids, handle_key(comm), LOGGP_REQ_RECV_POSTED, id);
}

/* newcomm was made on parent with members m (freed here): its id, and its membership into the
 * trace, which maps the ranks of its records to world ranks. */
static void made(MPI_Comm parent, MPI_Comm newcomm, membership m)
{
    uint32_t parent_id = loggp_comm_id(parent);
    uint64_t n = next_count(parent_id, m.hash);
    uint32_t id = loggp_derive_comm_id(parent_id, n, m.hash);
    remember(newcomm, id);
    if (m.in_world)
        loggp_trace_members(id, m.n, m.ranks);
    free(m.ranks);
}

static void made_intracomm(MPI_Comm parent, MPI_Comm newcomm)
{
    if (newcomm != MPI_COMM_NULL)
        made(parent, newcomm, members_of(newcomm));
}

/* A duplicate has its parent's members (an Idup's may not be asked before it completes). */
static void made_duplicate(MPI_Comm parent, MPI_Comm newcomm)
{
    if (newcomm != MPI_COMM_NULL)
        made(parent, newcomm, members_of(parent));
}

/* Each side names its half (its own parent, count and members); one Allreduce over the new
 * intercommunicator hands each side the other's, and the id is of the two in a fixed order. */
static void made_intercomm(MPI_Comm local, MPI_Comm newcomm)
{
    if (newcomm == MPI_COMM_NULL)
        return;
    uint32_t parent_id = loggp_comm_id(local);
    /* no membership recorded: an intercommunicator's ranks name the other group's members */
    membership m = members_of(local);
    free(m.ranks);
    uint64_t members = m.hash;
    uint64_t n = next_count(parent_id, members);
    int64_t mine = (int64_t)loggp_derive_comm_id(parent_id, n, members) << 32 | (int64_t)(members & 0xffffffffu);
    /* on an intercommunicator each group gets the reduction of the other group's values */
    int64_t other = mine;
    if (pmpi.Allreduce(&mine, &other, 1, MPI_INT64_T, MPI_MAX, newcomm) != MPI_SUCCESS)
        return;
    uint64_t low = (uint64_t)(mine < other ? mine : other), high = (uint64_t)(mine < other ? other : mine);
    remember(newcomm, loggp_derive_comm_id((uint32_t)(low >> 32), high, low));
}

static void forget(MPI_Comm comm)
{
    loggp_table_remove(&ids, handle_key(comm));
}

void loggp_comms_finalize(void)
{
    if (have_world_group)
        pmpi.Group_free(&world_group);
    have_world_group = 0;
}

/* ---- the wrappers: outside a trace each is a bare tail call ---- */

/* MPI_<name>: the bare call outside a trace, else traced_<name>. */
#define TRACED_ONLY(name, params, args)                        \
    int MPI_##name params                                      \
    {                                                          \
        if (__builtin_expect(!loggp_tracing, 1))               \
            return pmpi.name args;                             \
        return traced_##name args;                             \
    }

#define COMM_WRAPPER(name, params, args, after)                 \
    static __attribute__((noinline)) int traced_##name params \
    {                                                          \
        int rc = pmpi.name args;                               \
        if (rc == MPI_SUCCESS)                                 \
            after;                                             \
        return rc;                                             \
    }                                                          \
    TRACED_ONLY(name, params, args)

COMM_WRAPPER(Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm), (comm, newcomm), made_duplicate(comm, *newcomm))
COMM_WRAPPER(Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm), (comm, info, newcomm),
             made_duplicate(comm, *newcomm))

/* An Idup is recorded too: the Wait that completes its request is. */
#define IDUP_WRAPPER(name, params, args)                                                          \
    static __attribute__((noinline)) int traced_##name params                                   \
    {                                                                                            \
        uint64_t t0 = loggp_now_ns();                                                            \
        int rc = pmpi.name args;                                                                 \
        if (rc == MPI_SUCCESS)                                                                   \
            made_duplicate(comm, *newcomm);                                                      \
        loggp_trace_call(TRACE_COMM(name), t0, -1, -1, comm, 0, rc == MPI_SUCCESS ? request_key(*req) : 0); \
        return rc;                                                                               \
    }                                                                                            \
    TRACED_ONLY(name, params, args)

IDUP_WRAPPER(Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *req), (comm, newcomm, req))
#if MPI_VERSION >= 4
IDUP_WRAPPER(Comm_idup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *req),
             (comm, info, newcomm, req))
#endif
COMM_WRAPPER(Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm), (comm, color, key, newcomm),
             made_intracomm(comm, *newcomm))
COMM_WRAPPER(Comm_split_type, (MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm),
             (comm, type, key, info, newcomm), made_intracomm(comm, *newcomm))
COMM_WRAPPER(Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm), (comm, group, newcomm),
             made_intracomm(comm, *newcomm))
COMM_WRAPPER(Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm),
             (comm, group, tag, newcomm), made_intracomm(comm, *newcomm))
COMM_WRAPPER(Cart_create,
             (MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *newcomm),
             (comm, ndims, dims, periods, reorder, newcomm), made_intracomm(comm, *newcomm))
COMM_WRAPPER(Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm), (comm, remain_dims, newcomm),
             made_intracomm(comm, *newcomm))
COMM_WRAPPER(Graph_create,
             (MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm *newcomm),
             (comm, nnodes, index, edges, reorder, newcomm), made_intracomm(comm, *newcomm))
COMM_WRAPPER(Dist_graph_create,
             (MPI_Comm comm, int n, const int sources[], const int degrees[], const int destinations[],
              const int weights[], MPI_Info info, int reorder, MPI_Comm *newcomm),
             (comm, n, sources, degrees, destinations, weights, info, reorder, newcomm),
             made_intracomm(comm, *newcomm))
COMM_WRAPPER(Dist_graph_create_adjacent,
             (MPI_Comm comm, int indegree, const int sources[], const int sourceweights[], int outdegree,
              const int destinations[], const int destweights[], MPI_Info info, int reorder, MPI_Comm *newcomm),
             (comm, indegree, sources, sourceweights, outdegree, destinations, destweights, info, reorder, newcomm),
             made_intracomm(comm, *newcomm))
COMM_WRAPPER(Intercomm_create,
             (MPI_Comm local, int local_leader, MPI_Comm peer, int remote_leader, int tag, MPI_Comm *newcomm),
             (local, local_leader, peer, remote_leader, tag, newcomm), made_intercomm(local, *newcomm))
COMM_WRAPPER(Intercomm_merge, (MPI_Comm comm, int high, MPI_Comm *newcomm), (comm, high, newcomm),
             made_intracomm(comm, *newcomm))

/* The id goes before the handle does: another thread may get the handle back at once. */
#define COMM_RELEASE(name)                                           \
    static __attribute__((noinline)) int traced_##name(MPI_Comm *comm) \
    {                                                                \
        forget(*comm);                                               \
        return pmpi.name(comm);                                      \
    }                                                                \
    int MPI_##name(MPI_Comm *comm)                                   \
    {                                                                \
        if (__builtin_expect(!loggp_tracing, 1))                     \
            return pmpi.name(comm);                                  \
        return traced_##name(comm);                                  \
    }

COMM_RELEASE(Comm_free)
COMM_RELEASE(Comm_disconnect)
