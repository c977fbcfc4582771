// Test kernels for `roofcalc kernels`: each one stresses one resource, so that registers,
// static and dynamic shared memory, launch bounds, spills, named barriers and C++ names all
// appear in the ptxas log, the cuobjdump output, the cubins and the Nsight Compute export.
// The host program prints what the CUDA runtime says about each kernel (cudaFuncGetAttributes
// and cudaOccupancyMaxActiveBlocksPerMultiprocessor for several launch configurations) as JSON,
// then launches each kernel so that ncu can profile it.
//
//   ./kernels            attributes and occupancy as JSON on stdout, then the launches
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>


extern "C" __global__ void k_plain(float* __restrict__ a, const float* __restrict__ b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] + b[i];
}

extern "C" __global__ void k_static32k(float* a, int n) {
    __shared__ float s[8192];  // 32,768 bytes
    int t = threadIdx.x;
    for (int j = t; j < 8192; j += blockDim.x) s[j] = (float)j;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + t;
    if (i < n) a[i] += s[(t * 7) & 8191];
}

extern "C" __global__ void k_static48k(float* a, int n) {
    __shared__ float s[12288];  // 49,152 bytes: the most static shared memory a kernel may have
    int t = threadIdx.x;
    for (int j = t; j < 12288; j += blockDim.x) s[j] = (float)j;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + t;
    if (i < n) a[i] += s[(t * 13) % 12288];
}

extern "C" __global__ void k_dyn_only(float* a, int n) {
    extern __shared__ float d[];
    int t = threadIdx.x;
    d[t] = (float)t;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + t;
    if (i < n) a[i] += d[blockDim.x - 1 - t];
}

extern "C" __global__ void k_static8k_dyn(float* a, int n) {
    __shared__ float s[2048];  // 8,192 bytes static, plus the launch's dynamic shared memory
    extern __shared__ float d[];
    int t = threadIdx.x;
    s[t & 2047] = (float)t;
    d[t] = (float)(2 * t);
    __syncthreads();
    int i = blockIdx.x * blockDim.x + t;
    if (i < n) a[i] += s[(t + 1) & 2047] + d[blockDim.x - 1 - t];
}

// Many live accumulators: the register count is set by the bounds (or their absence). The test
// suite compiles this file with -DKERNELS_LIGHT: fewer accumulators, a faster compile, the same caps.
#ifdef KERNELS_LIGHT
#define HEAVY_BIG 100
#define HEAVY_MID 72
#else
#define HEAVY_BIG 150
#define HEAVY_MID 96
#endif
#define HEAVY_BODY(HEAVY_N)                                                          \
    float acc[HEAVY_N];                                                              \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                   \
    _Pragma("unroll") for (int j = 0; j < HEAVY_N; ++j) acc[j] = in[(i + 31 * j) % n]; \
    for (int it = 0; it < iters; ++it) {                                             \
        _Pragma("unroll") for (int j = 0; j < HEAVY_N; ++j)                          \
            acc[j] = fmaf(acc[j], acc[(j + 1) % HEAVY_N], 0.5f);                      \
    }                                                                                \
    float sum = 0.f;                                                                 \
    _Pragma("unroll") for (int j = 0; j < HEAVY_N; ++j) sum += acc[j];               \
    if (i < n) out[i] = sum;

extern "C" __global__ void k_regs_heavy(const float* __restrict__ in, float* __restrict__ out, int n, int iters) {
    HEAVY_BODY(HEAVY_BIG)
}
extern "C" __global__ void __launch_bounds__(256, 2) k_lb256x2(const float* __restrict__ in, float* __restrict__ out,
                                                               int n, int iters) {
    HEAVY_BODY(HEAVY_MID)
}
extern "C" __global__ void __launch_bounds__(1024) k_lb1024(const float* __restrict__ in, float* __restrict__ out,
                                                            int n, int iters) {
    HEAVY_BODY(HEAVY_MID)
}
extern "C" __global__ void __maxnreg__(40) k_spill(const float* __restrict__ in, float* __restrict__ out, int n,
                                                    int iters) {
    HEAVY_BODY(HEAVY_MID)
}

extern "C" __global__ void k_bars3(float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += 1.f;
    __syncthreads();
    asm volatile("bar.sync 1;" ::: "memory");
    if (i < n) a[i] += 2.f;
    asm volatile("bar.sync 2;" ::: "memory");
    if (i < n) a[i] += 3.f;
}

template <int N>
__global__ void k_tmpl(float* a, int n) {
    __shared__ float s[N];
    int t = threadIdx.x;
    s[t % N] = (float)t;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + t;
    if (i < n) a[i] += s[(t + 3) % N];
}
template __global__ void k_tmpl<4096>(float*, int);  // 16,384 bytes static

namespace rc {
struct Params { float scale; int n; };
__global__ void k_ns(Params p, float* a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) a[i] *= p.scale;
}
}  // namespace rc

struct Kernel {
    const char* label;
    const void* fn;
    int launch_threads;  // block size of the profiled launch
    int launch_dyn;      // dynamic shared memory of the profiled launch
};

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

int main(int argc, char** argv) {
    bool launch = !(argc > 1 && strcmp(argv[1], "--no-launch") == 0);
    Kernel ks[] = {
        {"k_plain", (const void*)k_plain, 256, 0},
        {"k_static32k", (const void*)k_static32k, 256, 0},
        {"k_static48k", (const void*)k_static48k, 256, 0},
        {"k_dyn_only", (const void*)k_dyn_only, 256, 64 * 1024},
        {"k_static8k_dyn", (const void*)k_static8k_dyn, 128, 24 * 1024},
        {"k_regs_heavy", (const void*)k_regs_heavy, 256, 0},
        {"k_lb256x2", (const void*)k_lb256x2, 256, 0},
        {"k_lb1024", (const void*)k_lb1024, 1024, 0},
        {"k_spill", (const void*)k_spill, 256, 0},
        {"k_bars3", (const void*)k_bars3, 64, 0},
        {"k_tmpl<4096>", (const void*)k_tmpl<4096>, 256, 0},
        {"rc::k_ns", (const void*)rc::k_ns, 256, 0},
    };
    const int nk = sizeof(ks) / sizeof(ks[0]);
    const int threads[] = {32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024};
    const int dyns[] = {0, 1000, 16 * 1024, 48 * 1024, 64 * 1024, 100 * 1024, 160 * 1024, 200 * 1024};

    int dev = 0, rt = 0, drv = 0;
    CK(cudaGetDevice(&dev));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    CK(cudaRuntimeGetVersion(&rt));
    CK(cudaDriverGetVersion(&drv));
    printf("{\n\"device\": \"%s\", \"cc\": \"%d.%d\", \"runtime\": %d, \"driver\": %d, \"sm_count\": %d,\n",
           p.name, p.major, p.minor, rt, drv, p.multiProcessorCount);
    printf("\"shared_mem_per_block\": %zu, \"shared_mem_per_block_optin\": %zu, \"shared_mem_per_sm\": %zu, "
           "\"reserved_shared_mem_per_block\": %zu, \"regs_per_sm\": %d, \"max_threads_per_sm\": %d, "
           "\"max_blocks_per_sm\": %d,\n", p.sharedMemPerBlock, p.sharedMemPerBlockOptin,
           p.sharedMemPerMultiprocessor, p.reservedSharedMemPerBlock, p.regsPerMultiprocessor,
           p.maxThreadsPerMultiProcessor, p.maxBlocksPerMultiProcessor);
    printf("\"kernels\": [\n");
    for (int k = 0; k < nk; ++k) {
        cudaFuncAttributes a;
        CK(cudaFuncGetAttributes(&a, ks[k].fn));
        const char* name = ks[k].label;
        cudaFuncGetName(&name, ks[k].fn);  // the mangled name where the runtime knows it
        printf("{\"label\": \"%s\", \"name\": \"%s\", \"numRegs\": %d, \"sharedSizeBytes\": %zu, "
               "\"localSizeBytes\": %zu, \"constSizeBytes\": %zu, \"maxThreadsPerBlock\": %d, "
               "\"maxDynamicSharedSizeBytes\": %d, \"binaryVersion\": %d, \"ptxVersion\": %d,\n \"occupancy\": [",
               ks[k].label, name, a.numRegs, a.sharedSizeBytes, a.localSizeBytes, a.constSizeBytes,
               a.maxThreadsPerBlock, a.maxDynamicSharedSizeBytes, a.binaryVersion, a.ptxVersion);
        bool first = true;
        for (int t : threads) {
            for (int d : dyns) {
                int blocks = -1;
                cudaError_t e = cudaFuncSetAttribute(ks[k].fn, cudaFuncAttributeMaxDynamicSharedMemorySize, d);
                if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, ks[k].fn, t, d);
                printf("%s\n  {\"threads\": %d, \"dynamic_smem\": %d, ", first ? "" : ",", t, d);
                if (e == cudaSuccess) printf("\"blocks_per_sm\": %d}", blocks);
                else printf("\"error\": \"%s\"}", cudaGetErrorName(e));
                cudaGetLastError();
                first = false;
            }
        }
        printf("]}%s\n", k + 1 < nk ? "," : "");
    }
    printf("]}\n");
    fflush(stdout);
    if (!launch) return 0;

    const int n = 1 << 26;  // 64 Mi floats: 256 MB per buffer, far over the L2
    float *a, *b, *c;
    CK(cudaMalloc(&a, n * sizeof(float)));
    CK(cudaMalloc(&b, n * sizeof(float)));
    CK(cudaMalloc(&c, n * sizeof(float)));
    CK(cudaMemset(a, 0, n * sizeof(float)));
    CK(cudaMemset(b, 0, n * sizeof(float)));
    const int small = 1 << 20;  // the resource kernels touch 4 MB
    for (int k = 0; k < nk; ++k) {
        int t = ks[k].launch_threads, d = ks[k].launch_dyn;
        CK(cudaFuncSetAttribute(ks[k].fn, cudaFuncAttributeMaxDynamicSharedMemorySize, d));
        for (int rep = 0; rep < 2; ++rep) {
            if (ks[k].fn == (const void*)k_plain) k_plain<<<n / t, t>>>(a, b, n);
            else if (ks[k].fn == (const void*)k_static32k) k_static32k<<<small / t, t>>>(a, small);
            else if (ks[k].fn == (const void*)k_static48k) k_static48k<<<small / t, t>>>(a, small);
            else if (ks[k].fn == (const void*)k_dyn_only) k_dyn_only<<<small / t, t, d>>>(a, small);
            else if (ks[k].fn == (const void*)k_static8k_dyn) k_static8k_dyn<<<small / t, t, d>>>(a, small);
            else if (ks[k].fn == (const void*)k_regs_heavy) k_regs_heavy<<<small / t, t>>>(b, c, small, 64);
            else if (ks[k].fn == (const void*)k_lb256x2) k_lb256x2<<<small / t, t>>>(b, c, small, 64);
            else if (ks[k].fn == (const void*)k_lb1024) k_lb1024<<<small / t, t>>>(b, c, small, 64);
            else if (ks[k].fn == (const void*)k_spill) k_spill<<<small / t, t>>>(b, c, small, 64);
            else if (ks[k].fn == (const void*)k_bars3) k_bars3<<<small / t, t>>>(a, small);
            else if (ks[k].fn == (const void*)k_tmpl<4096>) k_tmpl<4096><<<small / t, t>>>(a, small);
            else rc::k_ns<<<small / t, t>>>(rc::Params{0.5f, small}, a);
            CK(cudaGetLastError());
        }
    }
    CK(cudaDeviceSynchronize());
    fprintf(stderr, "launched %d kernels twice each\n", nk);
    return 0;
}
