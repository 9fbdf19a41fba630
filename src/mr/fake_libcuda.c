/* A stand-in for libcuda.so.1 in tests: the driver calls oomguard makes,
 * backed by malloc, with a device of 1 GiB. Lets the real dlopen/dlsym path
 * (LoadCudaDriver, CudaDeviceResource, PinnedHostResource) run without a GPU. */
#include <stdint.h>
#include <stdlib.h>

#define CAPACITY (1ull << 30)
#define HEADER 256
static unsigned long long used;
static int initialized;

int cuInit(unsigned flags) { (void)flags; initialized = 1; return 0; }
int cuDeviceGet(int* device, int ordinal) {
  if (!initialized) return 3; /* CUDA_ERROR_NOT_INITIALIZED */
  if (ordinal != 0) return 101; /* CUDA_ERROR_INVALID_DEVICE */
  *device = 0;
  return 0;
}
int cuDevicePrimaryCtxRetain(void** ctx, int device) { (void)device; *ctx = (void*)&used; return 0; }
int cuDevicePrimaryCtxRelease_v2(int device) { (void)device; return 0; }
int cuCtxSetCurrent(void* ctx) { (void)ctx; return 0; }
int cuMemAlloc_v2(unsigned long long* dptr, size_t bytes) {
  if (__atomic_add_fetch(&used, bytes, __ATOMIC_SEQ_CST) > CAPACITY) {
    __atomic_sub_fetch(&used, bytes, __ATOMIC_SEQ_CST);
    return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  }
  char* p = aligned_alloc(HEADER, HEADER + (bytes + HEADER - 1) / HEADER * HEADER);
  *(size_t*)p = bytes;
  *dptr = (unsigned long long)(uintptr_t)(p + HEADER);
  return 0;
}
int cuMemFree_v2(unsigned long long dptr) {
  char* p = (char*)(uintptr_t)dptr - HEADER;
  __atomic_sub_fetch(&used, *(size_t*)p, __ATOMIC_SEQ_CST);
  free(p);
  return 0;
}
int cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  *free_bytes = CAPACITY - __atomic_load_n(&used, __ATOMIC_SEQ_CST);
  *total = CAPACITY;
  return 0;
}
int cuMemHostAlloc(void** p, size_t bytes, unsigned flags) {
  (void)flags;
  if (bytes > CAPACITY) return 2;
  *p = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  return *p ? 0 : 2;
}
int cuMemFreeHost(void* p) { free(p); return 0; }
int cuGetErrorName(int error, const char** name) {
  switch (error) {
    case 0: *name = "CUDA_SUCCESS"; return 0;
    case 2: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return 0;
    case 3: *name = "CUDA_ERROR_NOT_INITIALIZED"; return 0;
    case 1: *name = "CUDA_ERROR_INVALID_VALUE"; return 0;
    case 101: *name = "CUDA_ERROR_INVALID_DEVICE"; return 0;
    default: return 1;
  }
}

/* Virtual memory management, with the struct layouts of cuda.h. Address
 * ranges are plain malloc'd bytes; each cuMemCreate is a handle that counts
 * against the capacity. FAKECUDA_NO_VMM=1 reports the device as unsupported;
 * FAKECUDA_BROKEN_VMM=1 makes cuMemCreate fail with CUDA_ERROR_INVALID_VALUE. */
typedef struct { int type; int id; } FakeLocation;
typedef struct {
  int type;
  int requested_handle_types;
  FakeLocation location;
  void* win32;
  unsigned char compression, rdma;
  unsigned short usage;
  unsigned char reserved[4];
} FakeProp;
typedef struct { FakeLocation location; int flags; } FakeAccess;
#define GRANULE (2ull << 20)
static int env_set(const char* name) { const char* v = getenv(name); return v && v[0] == '1'; }

int cuDeviceGetAttribute(int* value, int attribute, int device) {
  (void)device;
  *value = attribute == 102 ? !env_set("FAKECUDA_NO_VMM") : 0;
  return 0;
}
int cuMemGetAllocationGranularity(size_t* granularity, const FakeProp* prop, int option) {
  (void)option;
  if (prop->type != 1 || prop->location.type != 1 || prop->location.id != 0) return 1; /* INVALID_VALUE */
  *granularity = GRANULE;
  return 0;
}
int cuMemAddressReserve(unsigned long long* ptr, size_t size, size_t alignment, unsigned long long addr,
                        unsigned long long flags) {
  (void)addr; (void)flags;
  if (alignment == 0) alignment = GRANULE;
  void* p = aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (!p) return 2;
  *ptr = (unsigned long long)(uintptr_t)p;
  return 0;
}
int cuMemAddressFree(unsigned long long ptr, size_t size) { (void)size; free((void*)(uintptr_t)ptr); return 0; }
int cuMemCreate(unsigned long long* handle, size_t size, const FakeProp* prop, unsigned long long flags) {
  (void)flags;
  if (env_set("FAKECUDA_BROKEN_VMM")) return 1;
  if (prop->type != 1 || prop->location.type != 1 || prop->location.id != 0 || size % GRANULE) return 1;
  if (__atomic_add_fetch(&used, size, __ATOMIC_SEQ_CST) > CAPACITY) {
    __atomic_sub_fetch(&used, size, __ATOMIC_SEQ_CST);
    return 2;
  }
  *handle = size; /* the handle remembers its size */
  return 0;
}
int cuMemRelease(unsigned long long handle) { __atomic_sub_fetch(&used, handle, __ATOMIC_SEQ_CST); return 0; }
int cuMemMap(unsigned long long ptr, size_t size, size_t offset, unsigned long long handle, unsigned long long flags) {
  (void)flags;
  return (ptr % GRANULE || size != handle || offset) ? 1 : 0;
}
int cuMemUnmap(unsigned long long ptr, size_t size) { return (ptr % GRANULE || size % GRANULE) ? 1 : 0; }
int cuMemSetAccess(unsigned long long ptr, size_t size, const FakeAccess* desc, size_t count) {
  (void)ptr; (void)size;
  return (count == 1 && desc->location.type == 1 && desc->location.id == 0 && desc->flags == 3) ? 0 : 1;
}
