/* LD_PRELOAD library counting what an MPI hands to UCX: messages, bytes,
 * distinct endpoints and send phases of the calling process, between
 * traffic_counter_start() and traffic_counter_stop().
 *
 * Why UCX's ucp layer: it is where both MPIs measured here put every
 * message on the wire. MPICH's ch4:ucx netmod sends point-to-point and
 * collective messages with ucp_tag_send_nbx / ucp_tag_send_sync_nbx and
 * its active messages (the protocol headers of some collectives and of
 * RMA) with ucp_am_send_nbx; with MPIR_CVAR_NOLOCAL=1 intranode messages
 * take that path too instead of shared memory. Open MPI 5's pml ucx
 * (--mca pml ucx) sends every PML message, including those of its
 * collective components (coll tuned/basic/libnbc call the PML directly,
 * invisible to PMPI), with the same ucp_tag_* calls. libucp is a separate
 * shared object in both, so its calls go through the PLT and can be
 * wrapped here; calls inside libucp (its own wire-up) are not seen.
 *
 * Counted per process:
 *   messages   every send call (tag, sync tag, active message, put, get)
 *   bytes      payload handed to UCX (active messages: header + payload)
 *   peers      distinct endpoints sent to
 *   phases     send calls made after a receive was posted since the last
 *              send: the number of send-after-receive steps, a per-rank
 *              proxy for the rounds of a collective (a recursive-doubling
 *              step is "post receive, send, wait"). Active-message
 *              receives arrive by callback and are not seen, so for
 *              AM-based protocols this undercounts.
 *
 * The benchmark finds the functions with dlsym(RTLD_DEFAULT, ...): without
 * this library preloaded it runs and reports that nothing was counted. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include <ucp/api/ucp.h>

struct traffic_counts {
  uint64_t messages, bytes, peers, phases, unknown_size;
};

static int counting;
static struct traffic_counts counts;
static int recv_since_send;
#define PEER_SLOTS 4096
static const void* peers[PEER_SLOTS];

void traffic_counter_start(void) {
  memset(&counts, 0, sizeof counts);
  memset(peers, 0, sizeof peers);
  recv_since_send = 0;
  counting = 1;
}
void traffic_counter_stop(void) { counting = 0; }
void traffic_counter_read(struct traffic_counts* out) { *out = counts; }
int traffic_counter_layer(void) { return 1; } /* 1: ucp */

static void note_peer(const void* ep) {
  uintptr_t h = ((uintptr_t)ep >> 4) * 11400714819323198485ull;
  for (unsigned i = 0; i < PEER_SLOTS; ++i) {
    unsigned k = (unsigned)((h >> 40) + i) % PEER_SLOTS;
    if (peers[k] == ep) return;
    if (!peers[k]) {
      peers[k] = ep;
      ++counts.peers;
      return;
    }
  }
}

static uint64_t size_of(const void* buffer, size_t count, ucp_datatype_t dt) {
  switch (dt & UCP_DATATYPE_CLASS_MASK) {
    case UCP_DATATYPE_CONTIG:
      return (uint64_t)count * (dt >> UCP_DATATYPE_SHIFT);
    case UCP_DATATYPE_IOV: {
      const ucp_dt_iov_t* iov = buffer;
      uint64_t n = 0;
      for (size_t i = 0; i < count; ++i) n += iov[i].length;
      return n;
    }
    default: /* generic or strided: the size is not in the call */
      ++counts.unknown_size;
      return 0;
  }
}

static ucp_datatype_t dt_of(const ucp_request_param_t* p) {
  return (p->op_attr_mask & UCP_OP_ATTR_FIELD_DATATYPE) ? p->datatype : ucp_dt_make_contig(1);
}

static void note_send(const void* ep, uint64_t bytes) {
  if (!counting) return;
  ++counts.messages;
  counts.bytes += bytes;
  note_peer(ep);
  if (recv_since_send || counts.messages == 1) ++counts.phases;
  recv_since_send = 0;
}
static void note_recv(void) {
  if (counting) recv_since_send = 1;
}

#define REAL(name) \
  static __typeof__(name)* real; \
  if (!real) *(void**)&real = dlsym(RTLD_NEXT, #name)

ucs_status_ptr_t ucp_tag_send_nbx(ucp_ep_h ep, const void* buffer, size_t count, ucp_tag_t tag,
                                  const ucp_request_param_t* param) {
  REAL(ucp_tag_send_nbx);
  note_send(ep, size_of(buffer, count, dt_of(param)));
  return real(ep, buffer, count, tag, param);
}

ucs_status_ptr_t ucp_tag_send_sync_nbx(ucp_ep_h ep, const void* buffer, size_t count, ucp_tag_t tag,
                                       const ucp_request_param_t* param) {
  REAL(ucp_tag_send_sync_nbx);
  note_send(ep, size_of(buffer, count, dt_of(param)));
  return real(ep, buffer, count, tag, param);
}

ucs_status_ptr_t ucp_tag_send_nb(ucp_ep_h ep, const void* buffer, size_t count, ucp_datatype_t datatype,
                                 ucp_tag_t tag, ucp_send_callback_t cb) {
  REAL(ucp_tag_send_nb);
  note_send(ep, size_of(buffer, count, datatype));
  return real(ep, buffer, count, datatype, tag, cb);
}

ucs_status_t ucp_tag_send_nbr(ucp_ep_h ep, const void* buffer, size_t count, ucp_datatype_t datatype,
                              ucp_tag_t tag, void* req) {
  REAL(ucp_tag_send_nbr);
  note_send(ep, size_of(buffer, count, datatype));
  return real(ep, buffer, count, datatype, tag, req);
}

ucs_status_ptr_t ucp_tag_send_sync_nb(ucp_ep_h ep, const void* buffer, size_t count, ucp_datatype_t datatype,
                                      ucp_tag_t tag, ucp_send_callback_t cb) {
  REAL(ucp_tag_send_sync_nb);
  note_send(ep, size_of(buffer, count, datatype));
  return real(ep, buffer, count, datatype, tag, cb);
}

ucs_status_ptr_t ucp_am_send_nb(ucp_ep_h ep, uint16_t id, const void* buffer, size_t count,
                                ucp_datatype_t datatype, ucp_send_callback_t cb, unsigned flags) {
  REAL(ucp_am_send_nb);
  note_send(ep, size_of(buffer, count, datatype));
  return real(ep, id, buffer, count, datatype, cb, flags);
}

ucs_status_ptr_t ucp_am_send_nbx(ucp_ep_h ep, unsigned id, const void* header, size_t header_length,
                                 const void* buffer, size_t count, const ucp_request_param_t* param) {
  REAL(ucp_am_send_nbx);
  note_send(ep, header_length + size_of(buffer, count, dt_of(param)));
  return real(ep, id, header, header_length, buffer, count, param);
}

ucs_status_ptr_t ucp_put_nbx(ucp_ep_h ep, const void* buffer, size_t count, uint64_t remote_addr,
                             ucp_rkey_h rkey, const ucp_request_param_t* param) {
  REAL(ucp_put_nbx);
  note_send(ep, size_of(buffer, count, dt_of(param)));
  return real(ep, buffer, count, remote_addr, rkey, param);
}

ucs_status_ptr_t ucp_get_nbx(ucp_ep_h ep, void* buffer, size_t count, uint64_t remote_addr, ucp_rkey_h rkey,
                             const ucp_request_param_t* param) {
  REAL(ucp_get_nbx);
  note_send(ep, size_of(buffer, count, dt_of(param)));
  return real(ep, buffer, count, remote_addr, rkey, param);
}

ucs_status_ptr_t ucp_tag_recv_nbx(ucp_worker_h worker, void* buffer, size_t count, ucp_tag_t tag,
                                  ucp_tag_t tag_mask, const ucp_request_param_t* param) {
  REAL(ucp_tag_recv_nbx);
  note_recv();
  return real(worker, buffer, count, tag, tag_mask, param);
}

ucs_status_ptr_t ucp_tag_recv_nb(ucp_worker_h worker, void* buffer, size_t count, ucp_datatype_t datatype,
                                 ucp_tag_t tag, ucp_tag_t tag_mask, ucp_tag_recv_callback_t cb) {
  REAL(ucp_tag_recv_nb);
  note_recv();
  return real(worker, buffer, count, datatype, tag, tag_mask, cb);
}

ucs_status_t ucp_tag_recv_nbr(ucp_worker_h worker, void* buffer, size_t count, ucp_datatype_t datatype,
                              ucp_tag_t tag, ucp_tag_t tag_mask, void* req) {
  REAL(ucp_tag_recv_nbr);
  note_recv();
  return real(worker, buffer, count, datatype, tag, tag_mask, req);
}

ucs_status_ptr_t ucp_tag_msg_recv_nbx(ucp_worker_h worker, void* buffer, size_t count, ucp_tag_message_h message,
                                      const ucp_request_param_t* param) {
  REAL(ucp_tag_msg_recv_nbx);
  note_recv();
  return real(worker, buffer, count, message, param);
}

/* Open MPI 5 makes the context id of MPI_Comm_create_from_group (and of
 * the communicators of MPI_Session-born groups) through PMIx group
 * operations with the local daemon, which exchanges with the other
 * daemons: traffic outside UCX. Counted here as calls (cumulative, read by
 * difference); what the daemons send is not seen. Arguments are forwarded
 * untouched (integer-class, so a forwarder of the same arity is exact). */
static uint64_t pmix_calls;
uint64_t traffic_counter_pmix_calls(void) { return pmix_calls; }

typedef int (*pmix7_fn)(void*, void*, size_t, void*, size_t, void*, void*);
typedef int (*pmix4_fn)(void*, size_t, void*, size_t);
typedef int (*pmix6_fn)(void*, size_t, void*, size_t, void*, void*);

int PMIx_Group_construct(void* grp, void* procs, size_t nprocs, void* directives, size_t ndirs, void* results,
                         void* nresults) {
  static pmix7_fn real;
  if (!real) *(void**)&real = dlsym(RTLD_NEXT, "PMIx_Group_construct");
  ++pmix_calls;
  return real(grp, procs, nprocs, directives, ndirs, results, nresults);
}

int PMIx_Fence(void* procs, size_t nprocs, void* info, size_t ninfo) {
  static pmix4_fn real;
  if (!real) *(void**)&real = dlsym(RTLD_NEXT, "PMIx_Fence");
  ++pmix_calls;
  return real(procs, nprocs, info, ninfo);
}

int PMIx_Fence_nb(void* procs, size_t nprocs, void* info, size_t ninfo, void* cb, void* cbdata) {
  static pmix6_fn real;
  if (!real) *(void**)&real = dlsym(RTLD_NEXT, "PMIx_Fence_nb");
  ++pmix_calls;
  return real(procs, nprocs, info, ninfo, cb, cbdata);
}
