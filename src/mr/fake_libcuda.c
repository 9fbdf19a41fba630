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
    case 101: *name = "CUDA_ERROR_INVALID_DEVICE"; return 0;
    default: return 1;
  }
}
