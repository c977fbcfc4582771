// roofcalc probe: measures the ceilings the roofline assumes, kernel floors, per-SM bandwidth,
// memory latency, block residency, and simple ops.
// CUDA runtime only. Every call is checked; every kernel's output is verified on the host;
// warm-up, then timed repetitions with device events, median reported. Prints one JSON object.
//   probe [--quick] [--section NAME]
//     --section: memory | fma | mma | floors | per_sm | latency | residency | ops | all (default)
//     --quick:   fewer repetitions; with 'all', the ceilings and floors only
// Lines '@progress TEXT' on stderr say how far a section has got.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, \
                 cudaGetErrorString(e_)); std::exit(3); } } while (0)
#define CKL() do { CK(cudaGetLastError()); } while (0)

static void fail(const char *what) { std::fprintf(stderr, "verification failed: %s\n", what); std::exit(4); }

static std::string out;  // JSON being built
static void jraw(const std::string &s) { out += s; }
static std::string jnum(double v) { char b[64]; std::snprintf(b, sizeof b, "%.10g", v); return b; }
static std::string jstr(const std::string &s) {
    std::string r = "\"";
    for (char c : s) { if (c == '"' || c == '\\') r += '\\'; r += c; }
    return r + "\"";
}

// ------------------------------------------------------------------ timing
template <typename F>
static double median_time(F launch, int reps, int warmup = 3) {
    for (int i = 0; i < warmup; ++i) launch();
    CK(cudaDeviceSynchronize());
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int i = 0; i < reps; ++i) {
        CK(cudaEventRecord(a)); launch(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); CKL();
        float t; CK(cudaEventElapsedTime(&t, a, b)); ms.push_back(t);
    }
    CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2] * 1e-3;
}

static int g_sms = 0;
static void progress(const std::string &what) { std::fprintf(stderr, "@progress %s\n", what.c_str()); std::fflush(stderr); }

// every sample (seconds), in launch order, after `warmup` untimed launches
template <typename F>
static std::vector<double> sample_times(F launch, int reps, int warmup = 1) {
    for (int i = 0; i < warmup; ++i) launch();
    CK(cudaDeviceSynchronize()); CKL();
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    std::vector<double> v;
    for (int i = 0; i < reps; ++i) {
        CK(cudaEventRecord(a)); launch(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); CKL();
        float t; CK(cudaEventElapsedTime(&t, a, b)); v.push_back(t * 1e-3);
    }
    CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
    return v;
}
static double median_of(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
static std::string jlist(const std::vector<double> &v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + jnum(v[i]);
    return s + "]";
}

__device__ __forceinline__ uint64_t gtime() { uint64_t t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ uint32_t smid() { uint32_t s; asm volatile("mov.u32 %0, %smid;" : "=r"(s)); return s; }

// ------------------------------------------------------------------ device memory
// Grid-stride loops with UNROLL independent 16-byte accesses in flight per thread.
constexpr int UNROLL = 4;
template <int U>
__global__ void k_read_t(const uint4 *__restrict__ a, size_t n, uint32_t *__restrict__ partial) {
    uint32_t s = 0;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i + (U - 1) * stride < n; i += U * stride) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = __ldcs(a + i + u * stride);  // streaming: read once
#pragma unroll
        for (int u = 0; u < U; ++u) s += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n; i += stride) { uint4 v = a[i]; s += v.x ^ v.y ^ v.z ^ v.w; }
    partial[blockIdx.x * (size_t)blockDim.x + threadIdx.x] = s;
}
__global__ void k_write(uint4 *__restrict__ a, size_t n, uint32_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t x = (uint32_t)i * 2654435761u + seed; a[i] = make_uint4(x, x + 1, x + 2, x + 3);
    }
}
template <int U>
__global__ void k_copy_t(const uint4 *__restrict__ a, uint4 *__restrict__ b, size_t n) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i + (U - 1) * stride < n; i += U * stride) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = __ldcs(a + i + u * stride);
#pragma unroll
        for (int u = 0; u < U; ++u) __stcs(b + i + u * stride, v[u]);
    }
    for (; i < n; i += stride) b[i] = a[i];
}
__device__ __forceinline__ float4 triad4(float s, float4 x, float4 y) {
    return make_float4(__fmaf_rn(s, y.x, x.x), __fmaf_rn(s, y.y, x.y), __fmaf_rn(s, y.z, x.z), __fmaf_rn(s, y.w, x.w));
}
__global__ void k_triad(float4 *__restrict__ a, const float4 *__restrict__ b, const float4 *__restrict__ c, float s, size_t n) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
        float4 x[UNROLL], y[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) { x[u] = b[i + u * stride]; y[u] = c[i + u * stride]; }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) a[i + u * stride] = triad4(s, x[u], y[u]);
    }
    for (; i < n; i += stride) a[i] = triad4(s, b[i], c[i]);
}
// L2: the same small buffer read `passes` times within one launch
__global__ void k_l2read(const uint4 *__restrict__ a, size_t n, int passes, uint32_t *__restrict__ partial) {
    uint32_t s = 0;
    for (int p = 0; p < passes; ++p)
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
            uint4 v = __ldcg(a + i); s += v.x ^ v.y ^ v.z ^ v.w;
        }
    partial[blockIdx.x * (size_t)blockDim.x + threadIdx.x] = s;
}

static void fill_random_u32(std::vector<uint32_t> &h, uint32_t seed) {
    std::mt19937 g(seed); for (auto &x : h) x = g() | 1u;
}

static void ceiling(const char *name, const char *unit, double value, double work, double t, int reps) {
    if (out.back() != '[') jraw(",");
    jraw("{\"name\":" + jstr(name) + ",\"unit\":" + jstr(unit) + ",\"value\":" + jnum(value) +
         ",\"work\":" + jnum(work) + ",\"median_s\":" + jnum(t) + ",\"reps\":" + std::to_string(reps) +
         ",\"verified\":true}");
}

static void memory_tests(size_t l2_bytes, int reps) {
    // working set per array: at least 4x L2, at least 256 MiB
    size_t bytes = std::max<size_t>(4 * l2_bytes, 256u << 20);
    bytes = (bytes + 15) / 16 * 16 * 2;  // 8x L2 per array
    size_t n = bytes / 16;
    size_t nw = n * 4;
    std::vector<uint32_t> h(nw); fill_random_u32(h, 1234);
    uint4 *a, *b, *c; CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes)); CK(cudaMalloc(&c, bytes));
    CK(cudaMemcpy(a, h.data(), bytes, cudaMemcpyHostToDevice));
    const int T = 256; int G = g_sms * 8;
    uint32_t *partial; CK(cudaMalloc(&partial, (size_t)g_sms * 32 * T * 4));
    // read: a few launch shapes (threads x blocks per SM, unroll 4 or 8), the best reported
    const int shapes[][2] = {{256, 8}, {256, 16}, {512, 4}, {1024, 1}, {1024, 2}};
    double t = 1e30; int best_g = G, best_u = 4, best_t = T;
    for (int u : {4, 8}) for (auto &sh : shapes) {
        int th = sh[0], g = g_sms * sh[1];
        double tt = median_time([&] { if (u == 4) k_read_t<4><<<g, th>>>(a, n, partial); else k_read_t<8><<<g, th>>>(a, n, partial); }, reps / 2 + 1);
        if (tt < t) { t = tt; best_g = g; best_u = u; best_t = th; }
    }
    t = median_time([&] { if (best_u == 4) k_read_t<4><<<best_g, best_t>>>(a, n, partial); else k_read_t<8><<<best_g, best_t>>>(a, n, partial); }, reps);
    std::vector<uint32_t> hp((size_t)best_g * best_t); CK(cudaMemcpy(hp.data(), partial, hp.size() * 4, cudaMemcpyDeviceToHost));
    uint32_t got = 0, want = 0; for (auto x : hp) got += x;
    for (size_t i = 0; i < n; ++i) want += h[4 * i] ^ h[4 * i + 1] ^ h[4 * i + 2] ^ h[4 * i + 3];
    if (got != want) fail("device-memory read checksum");
    ceiling("dram_read", "B/s", bytes / t, bytes, t, reps);
    // write
    t = median_time([&] { k_write<<<G, T>>>(b, n, 77u); }, reps);
    std::vector<uint32_t> hb(nw); CK(cudaMemcpy(hb.data(), b, bytes, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i += 9973) { uint32_t x = (uint32_t)i * 2654435761u + 77u; if (hb[4 * i] != x || hb[4 * i + 3] != x + 3) fail("write pattern"); }
    for (size_t i = 0; i < n; ++i) { uint32_t x = (uint32_t)i * 2654435761u + 77u; if (hb[4 * i + 1] != x + 1) fail("write pattern"); }
    ceiling("dram_write", "B/s", bytes / t, bytes, t, reps);
    // copy a -> b, same search over launch shapes
    t = 1e30; best_g = G; best_u = 4; best_t = T;
    for (int u : {4, 8}) for (auto &sh : shapes) {
        int th = sh[0], g = g_sms * sh[1];
        double tt = median_time([&] { if (u == 4) k_copy_t<4><<<g, th>>>(a, b, n); else k_copy_t<8><<<g, th>>>(a, b, n); }, reps / 2 + 1);
        if (tt < t) { t = tt; best_g = g; best_u = u; best_t = th; }
    }
    t = median_time([&] { if (best_u == 4) k_copy_t<4><<<best_g, best_t>>>(a, b, n); else k_copy_t<8><<<best_g, best_t>>>(a, b, n); }, reps);
    CK(cudaMemcpy(hb.data(), b, bytes, cudaMemcpyDeviceToHost));
    if (std::memcmp(hb.data(), h.data(), bytes) != 0) fail("copy");
    ceiling("dram_copy", "B/s", 2.0 * bytes / t, 2.0 * bytes, t, reps);
    // the driver's device-to-device copy, for comparison
    t = median_time([&] { CK(cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice)); }, reps);
    CK(cudaMemcpy(hb.data(), c, bytes, cudaMemcpyDeviceToHost));
    if (std::memcmp(hb.data(), h.data(), bytes) != 0) fail("cudaMemcpy copy");
    ceiling("dram_copy_memcpy", "B/s", 2.0 * bytes / t, 2.0 * bytes, t, reps);
    // triad c = a + s*b (floats from random bits scaled into [1,2))
    std::vector<float> fa(nw), fb(nw);
    std::mt19937 g(99); std::uniform_real_distribution<float> U(1.f, 2.f);
    for (size_t i = 0; i < nw; ++i) { fa[i] = U(g); fb[i] = U(g); }
    CK(cudaMemcpy(a, fa.data(), bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, fb.data(), bytes, cudaMemcpyHostToDevice));
    const float s = 0.75f;
    t = median_time([&] { k_triad<<<G, T>>>((float4 *)c, (const float4 *)a, (const float4 *)b, s, n); }, reps);
    std::vector<float> fc(nw); CK(cudaMemcpy(fc.data(), c, bytes, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < nw; ++i) if (fc[i] != std::fmaf(s, fb[i], fa[i])) fail("triad");
    ceiling("dram_triad", "B/s", 3.0 * bytes / t, 3.0 * bytes, t, reps);
    // L2: a buffer of a quarter of the L2, read 64 times per launch
    size_t l2n = (l2_bytes / 4) / 16; int passes = 64;
    CK(cudaMemcpy(a, h.data(), l2n * 16, cudaMemcpyHostToDevice));
    t = median_time([&] { k_l2read<<<G, T>>>(a, l2n, passes, partial); }, reps);
    hp.assign((size_t)G * T, 0); CK(cudaMemcpy(hp.data(), partial, hp.size() * 4, cudaMemcpyDeviceToHost));
    got = 0; want = 0; for (auto x : hp) got += x;
    uint32_t one = 0; for (size_t i = 0; i < l2n; ++i) one += h[4 * i] ^ h[4 * i + 1] ^ h[4 * i + 2] ^ h[4 * i + 3];
    want = one * (uint32_t)passes;
    if (got != want) fail("L2 read checksum");
    ceiling("l2_read", "B/s", (double)l2n * 16 * passes / t, (double)l2n * 16 * passes, t, reps);
    CK(cudaFree(a)); CK(cudaFree(b)); CK(cudaFree(c)); CK(cudaFree(partial));
}

// ------------------------------------------------------------------ FMA rates from registers
constexpr int CHAINS = 16;  // 8 chains left ~6% of the FFMA rate unused on H100 (validation/experiments)
template <typename T> __device__ __forceinline__ T fma_t(T a, T b, T c);
template <> __device__ __forceinline__ float fma_t(float a, float b, float c) { return __fmaf_rn(a, b, c); }
template <> __device__ __forceinline__ double fma_t(double a, double b, double c) { return __fma_rn(a, b, c); }
template <> __device__ __forceinline__ __half2 fma_t(__half2 a, __half2 b, __half2 c) { return __hfma2(a, b, c); }
template <> __device__ __forceinline__ __nv_bfloat162 fma_t(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) { return __hfma2(a, b, c); }
__device__ __forceinline__ float add_t(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_t(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ __half2 add_t(__half2 a, __half2 b) { return __hadd2(a, b); }
__device__ __forceinline__ __nv_bfloat162 add_t(__nv_bfloat162 a, __nv_bfloat162 b) { return __hadd2(a, b); }

// CHAINS independent dependency chains (distinct starting values, so none can be merged);
// the output is their sum in a fixed order, which the host reproduces exactly.
template <typename T, int U>
__global__ void k_fma(T *out, const T *x0, T a, T b, int iters, unsigned long long *clk) {
    // one thread records SM cycles and wall nanoseconds: the effective clock during the test
    unsigned long long c0 = clock64(), n0 = 0;
    if (blockIdx.x == 0 && threadIdx.x == 0) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(n0));
    T v[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) v[c] = x0[c];
#pragma unroll U
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) v[c] = fma_t(v[c], a, b);
    }
    T r = v[0];
#pragma unroll
    for (int c = 1; c < CHAINS; ++c) r = add_t(r, v[c]);
    out[blockIdx.x * (size_t)blockDim.x + threadIdx.x] = r;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned long long n1; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(n1));
        clk[0] = clock64() - c0; clk[1] = n1 - n0;
    }
}

template <typename T, typename H>
static void fma_test(const char *name, const T *x0, T a, T b, H expect, double flops_per_fma, int reps, H (*to_host)(T)) {
    const int threads = 512, blocks = g_sms * 8, iters = 4096;
    T *d, *dx; CK(cudaMalloc(&d, sizeof(T) * threads * blocks)); CK(cudaMalloc(&dx, sizeof(T) * CHAINS));
    unsigned long long *clk; CK(cudaMalloc(&clk, 16)); double mhz = 0;
    CK(cudaMemcpy(dx, x0, sizeof(T) * CHAINS, cudaMemcpyHostToDevice));
    // two loop shapes (unrolled 4x and 16x); both are verified, the faster is reported
    double t = 1e30;
    for (int u : {4, 16}) {
        CK(cudaMemset(d, 0, sizeof(T) * threads * blocks));
        double tt = median_time([&] { if (u == 4) k_fma<T, 4><<<blocks, threads>>>(d, dx, a, b, iters, clk);
                                      else k_fma<T, 16><<<blocks, threads>>>(d, dx, a, b, iters, clk); }, reps);
        unsigned long long hc[2]; CK(cudaMemcpy(hc, clk, 16, cudaMemcpyDeviceToHost));
        std::vector<T> h((size_t)threads * blocks); CK(cudaMemcpy(h.data(), d, sizeof(T) * h.size(), cudaMemcpyDeviceToHost));
        for (auto &x : h) if (!(to_host(x) == expect)) fail(name);
        if (tt < t) { t = tt; mhz = hc[1] ? 1e3 * (double)hc[0] / (double)hc[1] : 0; }
    }
    double fmas = (double)threads * blocks * iters * CHAINS;
    ceiling(name, "FLOP/s", fmas * flops_per_fma / t, fmas * flops_per_fma, t, reps);
    out.pop_back();
    jraw(",\"sm_clock_mhz\":" + jnum(mhz) + "}");
    CK(cudaFree(d)); CK(cudaFree(dx)); CK(cudaFree(clk));
}
static float id_f(float x) { return x; }
static double id_d(double x) { return x; }
static float h2_lo(__half2 x) { return __low2float(x); }
static float b2_lo(__nv_bfloat162 x) { return __low2float(x); }

// ------------------------------------------------------------------ tensor cores: mma.sync from registers
// Every A element = a, every B element = b: each output accumulates 16*a*b (k=16) or 32*a*b (k=32)
// per mma, exactly in fp32 for the small values used.
constexpr int ACC = 8;
template <int KIND>  // 0 bf16, 1 fp16, 2 fp8 e4m3
__global__ void k_mma(float *out, uint32_t areg, uint32_t breg, int iters) {
    float c[ACC][4];
#pragma unroll
    for (int j = 0; j < ACC; ++j) for (int q = 0; q < 4; ++q) c[j][q] = 0.f;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < ACC; ++j) {
            if (KIND == 0)
                asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                             : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
                             : "r"(areg), "r"(areg), "r"(areg), "r"(areg), "r"(breg), "r"(breg));
            else if (KIND == 1)
                asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                             : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
                             : "r"(areg), "r"(areg), "r"(areg), "r"(areg), "r"(breg), "r"(breg));
            else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890  // fp8 mma.sync exists from sm_89 (the host calls it there only)
                asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                             : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
                             : "r"(areg), "r"(areg), "r"(areg), "r"(areg), "r"(breg), "r"(breg));
#else
                __trap();
#endif
            }
        }
    }
    size_t base = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * ACC * 4;
#pragma unroll
    for (int j = 0; j < ACC; ++j) for (int q = 0; q < 4; ++q) out[base + j * 4 + q] = c[j][q];
}

template <int KIND>
static void mma_test(const char *name, uint32_t areg, uint32_t breg, float per_mma, int k, int reps) {
    const int threads = 256, blocks = g_sms * 8, iters = 2048;
    float *d; CK(cudaMalloc(&d, sizeof(float) * threads * blocks * ACC * 4));
    double t = median_time([&] { k_mma<KIND><<<blocks, threads>>>(d, areg, breg, iters); }, reps);
    std::vector<float> h((size_t)threads * blocks * ACC * 4); CK(cudaMemcpy(h.data(), d, 4 * h.size(), cudaMemcpyDeviceToHost));
    float expect = per_mma * iters;
    for (auto x : h) if (x != expect) fail(name);
    double mmas = (double)(threads / 32) * blocks * iters * ACC;
    double flops = mmas * 2.0 * 16 * 8 * k;
    ceiling(name, "FLOP/s", flops / t, flops, t, reps);
    CK(cudaFree(d));
}

// ------------------------------------------------------------------ launch overhead
__global__ void k_empty() {}

// ------------------------------------------------------------------ residency
struct Rec { uint32_t sm; uint32_t pad; uint64_t start, end; };

__device__ void spin(uint64_t ns) { uint64_t t0 = gtime(); while (gtime() - t0 < ns) {} }

__global__ void k_res_light(Rec *r, uint64_t ns) {
    extern __shared__ float dyn[];
    (void)dyn;  // the dynamic allocation is what is being measured; it need not be touched
    uint64_t t0 = gtime(); __syncthreads(); spin(ns); __syncthreads();
    if (threadIdx.x == 0) r[blockIdx.x] = {smid(), 0, t0, gtime()};
}
__global__ void k_res_static(Rec *r, uint64_t ns) {
    __shared__ float buf[10 * 1024];  // 40 KiB static
    uint64_t t0 = gtime(); buf[threadIdx.x] = (float)threadIdx.x; __syncthreads(); spin(ns); __syncthreads();
    if (threadIdx.x == 0) r[blockIdx.x] = {smid(), (uint32_t)buf[blockDim.x - 1], t0, gtime()};
}
template <int N>
__global__ void k_res_regs(Rec *r, uint64_t ns, const float *in, float *sink) {
    float v[N];
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = in[(threadIdx.x + i) & 1023];
    uint64_t t0 = gtime(); __syncthreads(); spin(ns); __syncthreads();
#pragma unroll
    for (int k = 0; k < 4; ++k)
#pragma unroll
        for (int i = 0; i < N; ++i) v[i] = v[i] * v[(i + 1) % N] + v[(i + 7) % N];
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < N; ++i) s += v[i];
    sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
    if (threadIdx.x == 0) r[blockIdx.x] = {smid(), 0, t0, gtime()};
}

struct ResCfg { const char *name; int kernel; int threads; int dyn; int carveout; const char *binds; };

static void residency_tests() {
    float *in, *sink; CK(cudaMalloc(&in, 4096 * 4)); CK(cudaMalloc(&sink, (size_t)64 << 20));
    std::vector<float> hin(1024); for (int i = 0; i < 1024; ++i) hin[i] = 0.5f + (i % 7) * 0.01f;
    CK(cudaMemcpy(in, hin.data(), 4096, cudaMemcpyHostToDevice));
    const ResCfg cfgs[] = {
        {"block slots: 32 threads", 0, 32, 0, -1, "blocks"},
        {"block slots: 64 threads", 0, 64, 0, -1, "blocks"},
        {"warp slots: 1024 threads", 0, 1024, 0, -1, "warps"},
        {"warp slots: 768 threads", 0, 768, 0, -1, "warps"},
        {"warp slots: 96 threads (3 warps)", 0, 96, 0, -1, "warps"},
        {"shared memory: 40 KiB dynamic", 0, 128, 40 * 1024, -1, "shared_memory"},
        {"shared memory: 100 KiB dynamic (opt-in)", 0, 128, 100 * 1024, -1, "shared_memory"},
        {"shared memory: 200 KiB dynamic (opt-in)", 0, 128, 200 * 1024, -1, "shared_memory"},
        {"shared memory: 40 KiB static", 1, 128, 0, -1, "shared_memory"},
        {"carveout 25%: 20 KiB dynamic", 0, 128, 20 * 1024, 25, "shared_memory"},
        {"carveout 50%: 30 KiB dynamic", 0, 256, 30 * 1024, 50, "shared_memory"},
        {"registers: 64-value kernel, 256 threads", 2, 256, 0, -1, "registers"},
        {"registers: 128-value kernel, 256 threads", 3, 256, 0, -1, "registers"},
        {"registers: 200-value kernel, 128 threads", 4, 128, 0, -1, "registers"},
    };
    bool first = true;
    for (const auto &c : cfgs) {
        const void *fn = c.kernel == 0 ? (const void *)k_res_light : c.kernel == 1 ? (const void *)k_res_static
                        : c.kernel == 2 ? (const void *)k_res_regs<64> : c.kernel == 3 ? (const void *)k_res_regs<128>
                        : (const void *)k_res_regs<200>;
        CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, c.dyn));
        CK(cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout, c.carveout));
        cudaFuncAttributes fa; CK(cudaFuncGetAttributes(&fa, fn));
        int rt = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&rt, fn, c.threads, c.dyn));
        int grid = g_sms * 40;
        Rec *d; CK(cudaMalloc(&d, sizeof(Rec) * grid)); CK(cudaMemset(d, 0xff, sizeof(Rec) * grid));
        uint64_t ns = 200000;  // each block stays 200 us so that resident blocks overlap
        void *args_light[] = {&d, &ns};
        void *args_regs[] = {&d, &ns, &in, &sink};
        CK(cudaLaunchKernel(fn, dim3(grid), dim3(c.threads), c.kernel >= 2 ? args_regs : args_light, c.dyn, 0));
        CK(cudaDeviceSynchronize()); CKL();
        std::vector<Rec> h(grid); CK(cudaMemcpy(h.data(), d, sizeof(Rec) * grid, cudaMemcpyDeviceToHost));
        // max over SMs of the blocks resident at once: sweep start (+1) and end (-1) events per SM
        std::vector<std::vector<std::pair<uint64_t, int>>> ev(g_sms);
        for (auto &r : h) {
            if (r.sm >= (uint32_t)g_sms || r.end < r.start || r.end == ~0ull) fail("residency record missing");
            ev[r.sm].push_back({r.start, 1}); ev[r.sm].push_back({r.end, -1});
        }
        int most = 0;
        for (auto &e : ev) {
            std::sort(e.begin(), e.end(), [](auto x, auto y) { return x.first != y.first ? x.first < y.first : x.second < y.second; });
            int cur = 0; for (auto &p : e) { cur += p.second; most = std::max(most, cur); }
        }
        if (!first) jraw(",");
        first = false;
        jraw("{\"name\":" + jstr(c.name) + ",\"expected_limiter\":" + jstr(c.binds) + ",\"threads\":" + std::to_string(c.threads) +
             ",\"regs\":" + std::to_string(fa.numRegs) + ",\"static_smem\":" + std::to_string(fa.sharedSizeBytes) +
             ",\"dyn_smem\":" + std::to_string(c.dyn) + ",\"carveout\":" + std::to_string(c.carveout) +
             ",\"grid\":" + std::to_string(grid) + ",\"runtime_blocks\":" + std::to_string(rt) +
             ",\"measured_blocks\":" + std::to_string(most) + "}");
        CK(cudaFree(d));
    }
    CK(cudaFree(in)); CK(cudaFree(sink));
}

// ------------------------------------------------------------------ ops (fp32)
__inline__ __device__ float warp_sum(float v) { for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o); return v; }
__inline__ __device__ float warp_max(float v) { for (int o = 16; o; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o)); return v; }
template <int T> __inline__ __device__ float block_sum(float v, float *sh) {
    v = warp_sum(v); if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v; __syncthreads();
    int l = threadIdx.x & 31;  // every warp reduces all partials: every thread gets the total
    float r = l < T / 32 ? sh[l] : 0.f; r = warp_sum(r); __syncthreads(); return r;
}
template <int T> __inline__ __device__ float block_max(float v, float *sh) {
    v = warp_max(v); if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v; __syncthreads();
    int l = threadIdx.x & 31;
    float r = l < T / 32 ? sh[l] : -INFINITY; r = warp_max(r); __syncthreads(); return r;
}

__global__ void k_dot(const float4 *x, const float4 *y, size_t n4, float *partial) {
    __shared__ float sh[32];
    float s = 0.f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
        float4 a = x[i], b = y[i]; s += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    }
    s = block_sum<256>(s, sh);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}
// y = A x, one warp per row
__global__ void k_gemv(const float4 *A, const float4 *x, float *y, int m, int n4) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;
    if (row >= m) return;
    const float4 *a = A + (size_t)row * n4; float s = 0.f;
    for (int j = lane; j < n4; j += 32) { float4 u = a[j], v = x[j]; s += u.x * v.x + u.y * v.y + u.z * v.z + u.w * v.w; }
    s = warp_sum(s); if (lane == 0) y[row] = s;
}
// softmax: one block of 1024 threads per row of 32000, the row held in registers (8 float4 per
// thread, all loads issued before any use): input read once, output written once.
constexpr int SM_COLS4 = 8000, SM_PER = 8;
__global__ void __launch_bounds__(1024) k_softmax(const float4 *x, float4 *y) {
    __shared__ float sh[32];
    const float4 *xr = x + (size_t)blockIdx.x * SM_COLS4; float4 *yr = y + (size_t)blockIdx.x * SM_COLS4;
    float4 v[SM_PER]; float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < SM_PER; ++k) {
        int j = threadIdx.x + 1024 * k;
        v[k] = j < SM_COLS4 ? xr[j] : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
    }
#pragma unroll
    for (int k = 0; k < SM_PER; ++k) m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
    m = block_max<1024>(m, sh);
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < SM_PER; ++k) {
        v[k] = make_float4(__expf(v[k].x - m), __expf(v[k].y - m), __expf(v[k].z - m), __expf(v[k].w - m));
        s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    }
    float inv = 1.f / block_sum<1024>(s, sh);
#pragma unroll
    for (int k = 0; k < SM_PER; ++k) {
        int j = threadIdx.x + 1024 * k;
        if (j < SM_COLS4) yr[j] = make_float4(v[k].x * inv, v[k].y * inv, v[k].z * inv, v[k].w * inv);
    }
}
// layernorm: one block of 256 threads per row of 4096, 16 values per thread in registers
__global__ void k_layernorm(const float4 *x, const float4 *g, const float4 *b, float4 *y, float eps) {
    __shared__ float sh[32];
    const float4 *xr = x + (size_t)blockIdx.x * 1024; float4 *yr = y + (size_t)blockIdx.x * 1024;
    float4 v[4]; float s = 0.f;
#pragma unroll
    for (int k = 0; k < 4; ++k) { v[k] = xr[threadIdx.x + 256 * k]; s += v[k].x + v[k].y + v[k].z + v[k].w; }
    float mean = block_sum<256>(s, sh) / 4096.f;
    float q = 0.f;
#pragma unroll
    for (int k = 0; k < 4; ++k) { float a = v[k].x - mean, bb = v[k].y - mean, c = v[k].z - mean, d = v[k].w - mean; q += a * a + bb * bb + c * c + d * d; }
    float rstd = rsqrtf(block_sum<256>(q, sh) / 4096.f + eps);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        int j = threadIdx.x + 256 * k; float4 gg = g[j], bb = b[j];
        yr[j] = make_float4((v[k].x - mean) * rstd * gg.x + bb.x, (v[k].y - mean) * rstd * gg.y + bb.y,
                            (v[k].z - mean) * rstd * gg.z + bb.z, (v[k].w - mean) * rstd * gg.w + bb.w);
    }
}

static std::vector<float> rand_floats(size_t n, uint32_t seed, float lo, float hi) {
    std::vector<float> v(n); std::mt19937 g(seed); std::uniform_real_distribution<float> U(lo, hi);
    for (auto &x : v) x = U(g); return v;
}
static void op_record(bool &first, const char *op, const std::string &params, double t, int reps) {
    if (!first) jraw(","); first = false;
    jraw("{\"op\":" + jstr(op) + ",\"dtype\":\"fp32\",\"params\":{" + params + "},\"median_s\":" + jnum(t) +
         ",\"reps\":" + std::to_string(reps) + ",\"impl\":\"roofcalc probe kernel\",\"verified\":true}");
}
static void close_rel(double got, double want, double tol, const char *what) {
    if (!(std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want)))) {
        std::fprintf(stderr, "%s: got %.8g want %.8g\n", what, got, want); fail(what);
    }
}

static void op_tests(int reps) {
    bool first = true;
    {   // dot, n = 2^27 (512 MiB per vector)
        size_t n = (size_t)1 << 27;
        auto hx = rand_floats(n, 1, -1.f, 1.f), hy = rand_floats(n, 2, -1.f, 1.f);
        float *x, *y, *p; int G = g_sms * 4;
        CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4)); CK(cudaMalloc(&p, G * 4));
        CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(y, hy.data(), n * 4, cudaMemcpyHostToDevice));
        double t = median_time([&] { k_dot<<<G, 256>>>((float4 *)x, (float4 *)y, n / 4, p); }, reps);
        std::vector<float> hp(G); CK(cudaMemcpy(hp.data(), p, G * 4, cudaMemcpyDeviceToHost));
        double got = 0, want = 0; for (auto v : hp) got += v; for (size_t i = 0; i < n; ++i) want += (double)hx[i] * hy[i];
        close_rel(got, want, 1e-3 * std::sqrt((double)n) / 100, "dot");
        op_record(first, "dot", "\"n\":" + std::to_string(n), t, reps);
        CK(cudaFree(x)); CK(cudaFree(y)); CK(cudaFree(p));
    }
    {   // gemv, m = n = 16384 (1 GiB matrix)
        int m = 16384, n = 16384;
        auto hA = rand_floats((size_t)m * n, 3, -1.f, 1.f), hx = rand_floats(n, 4, -1.f, 1.f);
        float *A, *x, *y; CK(cudaMalloc(&A, (size_t)m * n * 4)); CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, m * 4));
        CK(cudaMemcpy(A, hA.data(), (size_t)m * n * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
        CK(cudaMemset(y, 0xff, m * 4));
        double t = median_time([&] { k_gemv<<<m / 8, 256>>>((float4 *)A, (float4 *)x, y, m, n / 4); }, reps);
        std::vector<float> hy(m); CK(cudaMemcpy(hy.data(), y, m * 4, cudaMemcpyDeviceToHost));
        for (int r = 0; r < m; r += 7) { double w = 0; for (int j = 0; j < n; ++j) w += (double)hA[(size_t)r * n + j] * hx[j]; close_rel(hy[r], w, 1e-3, "gemv"); }
        op_record(first, "gemv", "\"m\":16384,\"n\":16384", t, reps);
        CK(cudaFree(A)); CK(cudaFree(x)); CK(cudaFree(y));
    }
    {   // softmax, rows = 4096, cols = 32000
        int rows = 4096, cols = 32000; size_t N = (size_t)rows * cols;
        auto hx = rand_floats(N, 5, -8.f, 8.f);
        float *x, *y; CK(cudaMalloc(&x, N * 4)); CK(cudaMalloc(&y, N * 4));
        CK(cudaMemcpy(x, hx.data(), N * 4, cudaMemcpyHostToDevice)); CK(cudaMemset(y, 0xff, N * 4));
        double t = median_time([&] { k_softmax<<<rows, 1024>>>((const float4 *)x, (float4 *)y); }, reps);
        std::vector<float> hy(N); CK(cudaMemcpy(hy.data(), y, N * 4, cudaMemcpyDeviceToHost));
        for (int r = 0; r < rows; r += 61) {
            double m = -1e30, s = 0; for (int j = 0; j < cols; ++j) m = std::max(m, (double)hx[(size_t)r * cols + j]);
            for (int j = 0; j < cols; ++j) s += std::exp(hx[(size_t)r * cols + j] - m);
            for (int j = 0; j < cols; j += 13) close_rel(hy[(size_t)r * cols + j], std::exp(hx[(size_t)r * cols + j] - m) / s, 1e-4, "softmax");
        }
        op_record(first, "softmax", "\"rows\":4096,\"cols\":32000", t, reps);
        CK(cudaFree(x)); CK(cudaFree(y));
    }
    {   // layernorm, rows = 16384, cols = 4096
        int rows = 16384, cols = 4096; size_t N = (size_t)rows * cols;
        auto hx = rand_floats(N, 6, -2.f, 3.f), hg = rand_floats(cols, 7, 0.5f, 1.5f), hb = rand_floats(cols, 8, -0.5f, 0.5f);
        float *x, *y, *g, *b; CK(cudaMalloc(&x, N * 4)); CK(cudaMalloc(&y, N * 4)); CK(cudaMalloc(&g, cols * 4)); CK(cudaMalloc(&b, cols * 4));
        CK(cudaMemcpy(x, hx.data(), N * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(g, hg.data(), cols * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(b, hb.data(), cols * 4, cudaMemcpyHostToDevice)); CK(cudaMemset(y, 0xff, N * 4));
        double t = median_time([&] { k_layernorm<<<rows, 256>>>((float4 *)x, (float4 *)g, (float4 *)b, (float4 *)y, 1e-5f); }, reps);
        std::vector<float> hy(N); CK(cudaMemcpy(hy.data(), y, N * 4, cudaMemcpyDeviceToHost));
        for (int r = 0; r < rows; r += 97) {
            double mu = 0, var = 0; for (int j = 0; j < cols; ++j) mu += hx[(size_t)r * cols + j]; mu /= cols;
            for (int j = 0; j < cols; ++j) { double d = hx[(size_t)r * cols + j] - mu; var += d * d; } var /= cols;
            double rs = 1.0 / std::sqrt(var + 1e-5);
            for (int j = 0; j < cols; ++j) close_rel(hy[(size_t)r * cols + j], (hx[(size_t)r * cols + j] - mu) * rs * hg[j] + hb[j], 1e-3, "layernorm");
        }
        op_record(first, "layernorm", "\"rows\":16384,\"cols\":4096", t, reps);
        CK(cudaFree(x)); CK(cudaFree(y)); CK(cudaFree(g)); CK(cudaFree(b));
    }
}

// ------------------------------------------------------------------ kernel floors
// A tiny kernel (1 block of 32 threads, one int written): alone between two events, N back to
// back on one stream, and G nodes of a CUDA graph replayed. Every figure is per kernel; every
// sample is kept so that the report shows the spread. Each run is checked by the value left.
__global__ void k_tiny(int *p, int v) { if (threadIdx.x == 0) *p = v; }

static void floor_tests(bool quick) {
    int *d; CK(cudaMalloc(&d, sizeof(int)));
    auto check = [&](int want, const char *what) {
        int h = -1; CK(cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost));
        if (h != want) fail(what);
    };
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    progress("kernel floors: one kernel between two events");
    const int nev = quick ? 60 : 200;
    for (int i = 0; i < 20; ++i) k_tiny<<<1, 32>>>(d, i);
    CK(cudaDeviceSynchronize()); CKL();
    CK(cudaMemset(d, 0xff, sizeof(int)));
    std::vector<double> ev;
    for (int i = 0; i < nev; ++i) {
        CK(cudaEventRecord(a)); k_tiny<<<1, 32>>>(d, i); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); CKL();
        float ms; CK(cudaEventElapsedTime(&ms, a, b)); ev.push_back(ms * 1e-3);
    }
    check(nev - 1, "event floor: the tiny kernel's write");
    progress("kernel floors: back-to-back launches on a stream");
    const int N = 2000, reps = quick ? 5 : 9;
    CK(cudaMemset(d, 0xff, sizeof(int)));
    std::vector<double> st;
    for (int r = 0; r <= reps; ++r) {  // the first round warms up
        CK(cudaEventRecord(a)); for (int i = 0; i < N; ++i) k_tiny<<<1, 32>>>(d, i); CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b)); CKL();
        float ms; CK(cudaEventElapsedTime(&ms, a, b));
        if (r > 0) st.push_back(ms * 1e-3 / N);
    }
    check(N - 1, "stream floor: the last kernel's write");
    progress("kernel floors: CUDA graph replays");
    const int G = 200, per = 5;
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t g; cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < G; ++i) k_tiny<<<1, 32, 0, s>>>(d, i);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    for (int i = 0; i < 3; ++i) CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s)); CKL();
    CK(cudaMemset(d, 0xff, sizeof(int))); CK(cudaDeviceSynchronize());
    std::vector<double> gr;
    for (int r = 0; r < reps; ++r) {
        CK(cudaEventRecord(a, s)); for (int i = 0; i < per; ++i) CK(cudaGraphLaunch(ge, s)); CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b)); CKL();
        float ms; CK(cudaEventElapsedTime(&ms, a, b)); gr.push_back(ms * 1e-3 / (per * G));
    }
    check(G - 1, "graph floor: the last node's write");
    jraw("[{\"name\":\"event\",\"kernels_per_sample\":1,\"samples_s\":" + jlist(ev) + ",\"verified\":true}," +
         "{\"name\":\"stream\",\"kernels_per_sample\":" + std::to_string(N) + ",\"samples_s\":" + jlist(st) + ",\"verified\":true}," +
         "{\"name\":\"graph\",\"kernels_per_sample\":" + std::to_string(per * G) + ",\"samples_s\":" + jlist(gr) + ",\"verified\":true}]");
    CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g)); CK(cudaStreamDestroy(s));
    CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b)); CK(cudaFree(d));
}

static void launch_overhead_test() {  // 10,000 empty kernels back to back (the calibration's launch_overhead_s)
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    for (int i = 0; i < 100; ++i) k_empty<<<1, 32>>>();
    CK(cudaDeviceSynchronize());
    std::vector<double> v;
    for (int r = 0; r < 5; ++r) {
        CK(cudaEventRecord(a)); for (int i = 0; i < 10000; ++i) k_empty<<<1, 32>>>(); CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b)); CKL(); float ms; CK(cudaEventElapsedTime(&ms, a, b)); v.push_back(ms * 1e-3 / 10000);
    }
    std::sort(v.begin(), v.end());
    ceiling("launch_overhead", "s", v[2], 10000, v[2] * 10000, 5);
    CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
}

// ------------------------------------------------------------------ per-SM bandwidth
// Exactly k blocks, each streaming its own contiguous slice with U independent 16-byte loads in
// flight per thread. Each block asks for more than half an SM's shared memory, so no two blocks
// share an SM; %smid confirms the placement.
template <int U>
__global__ void k_slice_read(const uint4 *__restrict__ a, size_t per_block, uint32_t *__restrict__ partial,
                             uint32_t *__restrict__ sm_of) {
    const uint4 *p = a + blockIdx.x * per_block;
    uint32_t s = 0;
    const size_t stride = blockDim.x;
    size_t i = threadIdx.x;
    for (; i + (U - 1) * stride < per_block; i += U * stride) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = __ldcs(p + i + u * stride);
#pragma unroll
        for (int u = 0; u < U; ++u) s += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < per_block; i += stride) { uint4 v = __ldcs(p + i); s += v.x ^ v.y ^ v.z ^ v.w; }
    partial[blockIdx.x * (size_t)blockDim.x + threadIdx.x] = s;
    if (threadIdx.x == 0) sm_of[blockIdx.x] = smid();
}
template <int U>
__global__ void k_slice_copy(const uint4 *__restrict__ a, uint4 *__restrict__ b, size_t per_block, uint32_t *__restrict__ sm_of) {
    const uint4 *p = a + blockIdx.x * per_block;
    uint4 *q = b + blockIdx.x * per_block;
    const size_t stride = blockDim.x;
    size_t i = threadIdx.x;
    for (; i + (U - 1) * stride < per_block; i += U * stride) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = __ldcs(p + i + u * stride);
#pragma unroll
        for (int u = 0; u < U; ++u) __stcs(q + i + u * stride, v[u]);
    }
    for (; i < per_block; i += stride) q[i] = p[i];
    if (threadIdx.x == 0) sm_of[blockIdx.x] = smid();
}
static void slice_read(int u, int k, int th, size_t dyn, const uint4 *a, size_t per, uint32_t *partial, uint32_t *smo) {
    switch (u) {
        case 1: k_slice_read<1><<<k, th, dyn>>>(a, per, partial, smo); break;
        case 2: k_slice_read<2><<<k, th, dyn>>>(a, per, partial, smo); break;
        case 4: k_slice_read<4><<<k, th, dyn>>>(a, per, partial, smo); break;
        default: k_slice_read<8><<<k, th, dyn>>>(a, per, partial, smo); break;
    }
}
static void slice_copy(int u, int k, int th, size_t dyn, const uint4 *a, uint4 *b, size_t per, uint32_t *smo) {
    switch (u) {
        case 1: k_slice_copy<1><<<k, th, dyn>>>(a, b, per, smo); break;
        case 2: k_slice_copy<2><<<k, th, dyn>>>(a, b, per, smo); break;
        case 4: k_slice_copy<4><<<k, th, dyn>>>(a, b, per, smo); break;
        default: k_slice_copy<8><<<k, th, dyn>>>(a, b, per, smo); break;
    }
}
template <typename K> static void allow_smem(K kern, size_t dyn) {
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn));
}
static uint32_t pat_x(size_t i, uint32_t seed) { return (uint32_t)i * 2654435761u + seed; }  // k_write's pattern

static void per_sm_tests(const cudaDeviceProp &p, bool quick) {
    const size_t CH = 4096;  // 64 KiB chunks (16-byte elements): slices and regions are whole chunks
    size_t S = std::max<size_t>((size_t)1 << 30, 16 * (size_t)p.l2CacheSize);
    S = S / (CH * 16) * (CH * 16);
    const size_t n = S / 16;
    const uint32_t seed = 12345u;
    uint4 *a, *b; CK(cudaMalloc(&a, S)); CK(cudaMalloc(&b, S));
    k_write<<<g_sms * 8, 256>>>(a, n, seed); CKL(); CK(cudaDeviceSynchronize());
    std::vector<uint32_t> chunk(n / CH);
    for (size_t c = 0; c < chunk.size(); ++c) {
        uint32_t t = 0;
        for (size_t i = c * CH; i < (c + 1) * CH; ++i) { uint32_t x = pat_x(i, seed); t += x ^ (x + 1) ^ (x + 2) ^ (x + 3); }
        chunk[c] = t;
    }
    uint32_t *partial, *smo;
    CK(cudaMalloc(&partial, sizeof(uint32_t) * g_sms * 1024)); CK(cudaMalloc(&smo, sizeof(uint32_t) * g_sms));
    const size_t dyn = std::min<size_t>(p.sharedMemPerMultiprocessor / 2 + 1024, p.sharedMemPerBlockOptin);
    allow_smem(k_slice_read<1>, dyn); allow_smem(k_slice_read<2>, dyn); allow_smem(k_slice_read<4>, dyn); allow_smem(k_slice_read<8>, dyn);
    allow_smem(k_slice_copy<1>, dyn); allow_smem(k_slice_copy<2>, dyn); allow_smem(k_slice_copy<4>, dyn); allow_smem(k_slice_copy<8>, dyn);
    int occ = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k_slice_read<4>, 1024, dyn));
    const int reps = quick ? 3 : 7;
    // bytes per launch: 16 MiB a block, at most half the buffer; launches rotate over regions of
    // the buffer (>= 16x L2), so no launch finds its data in L2
    auto bytes_for = [&](int k) { size_t unit = (size_t)k * CH * 16; size_t T = std::min(S / 2, (size_t)k * (16u << 20)); return T / unit * unit; };
    std::vector<uint32_t> hp((size_t)g_sms * 1024), hs(g_sms);
    std::string rows_read, rows_copy;
    auto measure = [&](bool copy, int k, int th, int u) -> double {
        const size_t T = bytes_for(k), per = T / 16 / k, nreg = S / T;
        int counter = 0;
        auto launch = [&]() {
            size_t off = (size_t)(counter++ % nreg) * (T / 16);
            if (copy) slice_copy(u, k, th, dyn, a + off, b + off, per, smo);
            else slice_read(u, k, th, dyn, a + off, per, partial, smo);
        };
        std::vector<double> v = sample_times(launch, reps, 1);
        // check a fresh launch over the first region, outputs poisoned first
        CK(cudaMemset(smo, 0xff, sizeof(uint32_t) * g_sms)); CK(cudaMemset(partial, 0, sizeof(uint32_t) * k * th));
        uint32_t want = 0; for (size_t c = 0; c < T / 16 / CH; ++c) want += chunk[c];
        if (copy) {
            CK(cudaMemset(b, 0, T));
            slice_copy(u, k, th, dyn, a, b, per, smo); CKL(); CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(hs.data(), smo, sizeof(uint32_t) * k, cudaMemcpyDeviceToHost));
            slice_read(4, k, 256, dyn, b, per, partial, smo); CKL(); CK(cudaDeviceSynchronize());  // read the copy back
            CK(cudaMemcpy(hp.data(), partial, sizeof(uint32_t) * k * 256, cudaMemcpyDeviceToHost));
            uint32_t got = 0; for (int i = 0; i < k * 256; ++i) got += hp[i];
            if (got != want) fail("per-SM copy: the copied region's checksum");
        } else {
            slice_read(u, k, th, dyn, a, per, partial, smo); CKL(); CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(hs.data(), smo, sizeof(uint32_t) * k, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(hp.data(), partial, sizeof(uint32_t) * k * th, cudaMemcpyDeviceToHost));
            uint32_t got = 0; for (int i = 0; i < k * th; ++i) got += hp[i];
            if (got != want) fail("per-SM read: checksum");
        }
        std::set<uint32_t> seen;  // SM ids need not be contiguous: count distinct values
        for (int i = 0; i < k; ++i) {
            if (hs[i] == 0xffffffffu) fail("per-SM bandwidth: a block recorded no SM");
            seen.insert(hs[i]);
        }
        const int distinct = (int)seen.size();
        std::string &rows = copy ? rows_copy : rows_read;
        rows += std::string(rows.empty() ? "" : ",") + "{\"blocks\":" + std::to_string(k) + ",\"threads\":" + std::to_string(th) +
                ",\"unroll\":" + std::to_string(u) + ",\"bytes\":" + std::to_string(T) + ",\"distinct_sms\":" +
                std::to_string(distinct) + ",\"samples_s\":" + jlist(v) + ",\"verified\":true}";
        return (copy ? 2.0 : 1.0) * T / median_of(v);
    };
    const int ths[] = {128, 256, 512, 1024}, us[] = {1, 2, 4, 8};
    int best1[2] = {1024, 8}, bestA[2] = {1024, 8};
    for (int which = 0; which < 2; ++which) {  // bytes in flight: one SM alone, then every SM
        const int k = which == 0 ? 1 : g_sms;
        double best = 0;
        int done = 0;
        for (int th : ths) for (int u : us) {
            if (quick && !((th == 256 && u == 4) || (th == 1024 && u == 8) || (th == 1024 && u == 2))) continue;
            progress("per-SM bandwidth: " + std::to_string(k) + (k == 1 ? " SM" : " SMs") + ", bytes in flight " + std::to_string(++done) +
                     (quick ? " of 3" : " of 16"));
            double bw = measure(false, k, th, u);
            if (bw > best) { best = bw; (which == 0 ? best1 : bestA)[0] = th; (which == 0 ? best1 : bestA)[1] = u; }
        }
    }
    std::vector<int> ks;
    const int klist_full[] = {1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128}, klist_quick[] = {1, 4, 16, 64};
    if (quick) { for (int k : klist_quick) if (k < g_sms) ks.push_back(k); }
    else { for (int k : klist_full) if (k < g_sms) ks.push_back(k); }
    ks.push_back(g_sms);
    int step = 0;
    for (int k : ks) {
        progress("per-SM bandwidth: read and copy with k SMs, " + std::to_string(++step) + " of " + std::to_string(ks.size()));
        for (int c = 0; c < 2; ++c) {
            const int *cfg = c == 0 ? best1 : bestA;
            if (c == 1 && bestA[0] == best1[0] && bestA[1] == best1[1]) continue;
            if (k != 1 && k != g_sms) measure(false, k, cfg[0], cfg[1]);
            measure(true, k, cfg[0], cfg[1]);
        }
    }
    jraw("{\"buffer_bytes\":" + std::to_string(S) + ",\"dyn_smem\":" + std::to_string(dyn) + ",\"blocks_per_sm\":" +
         std::to_string(occ) + ",\"read\":[" + rows_read + "],\"copy\":[" + rows_copy + "]}");
    CK(cudaFree(a)); CK(cudaFree(b)); CK(cudaFree(partial)); CK(cudaFree(smo));
}

// ------------------------------------------------------------------ memory latency
// One thread follows a random cyclic permutation (Sattolo), one node every `stride` bytes, with
// loads cached in L2 only (ld.global.cg). DRAM: a buffer of >= 4x L2, each timed walk continues
// where the last ended, so no node is visited twice. L2: a quarter of the L2, walked once in
// full before timing. The final index is checked against the host's walk.
__global__ void k_chase(const uint32_t *__restrict__ buf, uint32_t start, int steps, uint32_t words, uint32_t *out) {
    uint32_t p = start;
    for (int i = 0; i < steps; ++i) p = __ldcg(buf + (size_t)p * words);
    *out = p;
}

static void chase_test(const char *name, size_t bytes, size_t stride, int steps, int reps, bool resident, bool &first) {
    const size_t n = bytes / stride; const uint32_t words = (uint32_t)(stride / 4);
    std::vector<uint32_t> perm(n);
    for (size_t i = 0; i < n; ++i) perm[i] = (uint32_t)i;
    std::mt19937_64 g(2024);
    for (size_t i = n - 1; i > 0; --i) { size_t j = g() % i; std::swap(perm[i], perm[j]); }  // one cycle through all
    std::vector<uint32_t> h(n * words, 0);
    for (size_t i = 0; i < n; ++i) h[i * words] = perm[i];
    uint32_t *d, *o; CK(cudaMalloc(&d, n * stride)); CK(cudaMalloc(&o, 4));
    CK(cudaMemcpy(d, h.data(), n * stride, cudaMemcpyHostToDevice));
    auto walk = [&](uint32_t p, size_t k) { for (size_t i = 0; i < k; ++i) p = perm[p]; return p; };
    uint32_t pos = 0;
    const int warm = resident ? (int)n : steps;  // L2: touch every node; DRAM: code, TLB
    k_chase<<<1, 1>>>(d, pos, warm, words, o); CKL(); CK(cudaDeviceSynchronize());
    pos = walk(pos, warm);
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    std::vector<double> v;
    for (int r = 0; r < reps; ++r) {
        CK(cudaMemset(o, 0xff, 4));
        CK(cudaEventRecord(a)); k_chase<<<1, 1>>>(d, pos, steps, words, o); CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b)); CKL();
        float ms; CK(cudaEventElapsedTime(&ms, a, b));
        uint32_t got; CK(cudaMemcpy(&got, o, 4, cudaMemcpyDeviceToHost));
        uint32_t want = walk(pos, steps);
        if (got != want) fail("pointer chase: final index");
        pos = want;
        v.push_back(ms * 1e-3 / steps);
    }
    if (!first) jraw(",");
    first = false;
    jraw("{\"name\":" + jstr(name) + ",\"buffer_bytes\":" + std::to_string(n * stride) + ",\"stride_bytes\":" +
         std::to_string(stride) + ",\"steps\":" + std::to_string(steps) + ",\"samples_s\":" + jlist(v) + ",\"verified\":true}");
    CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b)); CK(cudaFree(d)); CK(cudaFree(o));
}

static void latency_tests(const cudaDeviceProp &p, bool quick) {
    bool first = true;
    const int reps = quick ? 5 : 7;
    progress("memory latency: DRAM pointer chase");
    size_t dram = std::max<size_t>(4 * (size_t)p.l2CacheSize, (size_t)256 << 20);
    chase_test("dram", dram, 256, quick ? 4000 : 12000, reps, false, first);
    progress("memory latency: L2 pointer chase");
    chase_test("l2", (size_t)p.l2CacheSize / 4 / 128 * 128, 128, quick ? 5000 : 20000, reps, true, first);
}

static void fma_ceilings(int reps) {
    {   // FMA chains: x <- fma(x, a, b). fp32/fp64 with a = 0.999, b = 0.001 (the host's fma is the
        // same correctly rounded operation); packed fp16/bf16 with a = -1, b = 0, exact, so an even
        // number of iterations returns each start value. Expected output: the chains' sum.
        const int iters = 4096;
        float xf[CHAINS], ef = 0.f; double xd[CHAINS], ed = 0.0;
        __half2 xh[CHAINS]; __nv_bfloat162 xb[CHAINS]; float eh = 0.f;
        for (int c = 0; c < CHAINS; ++c) {
            xf[c] = 1.0f + 0.125f * c; xd[c] = 1.0 + 0.125 * c;
            float vf = xf[c]; double vd = xd[c];
            for (int i = 0; i < iters; ++i) { vf = std::fmaf(vf, 0.999f, 0.001f); vd = std::fma(vd, 0.999, 0.001); }
            ef = c == 0 ? vf : ef + vf; ed = c == 0 ? vd : ed + vd;
            xh[c] = __floats2half2_rn(1.5f + c, 1.5f + c); xb[c] = __floats2bfloat162_rn(1.5f + c, 1.5f + c);
            eh += 1.5f + c;
        }
        fma_test<float, float>("fp32_fma", xf, 0.999f, 0.001f, ef, 2.0, reps, id_f);
        fma_test<double, double>("fp64_fma", xd, 0.999, 0.001, ed, 2.0, reps, id_d);
        fma_test<__half2, float>("fp16_fma", xh, __floats2half2_rn(-1.f, -1.f), __floats2half2_rn(0.f, 0.f), eh, 4.0, reps, h2_lo);
        fma_test<__nv_bfloat162, float>("bf16_fma", xb, __floats2bfloat162_rn(-1.f, -1.f), __floats2bfloat162_rn(0.f, 0.f), eh, 4.0, reps, b2_lo);
    }
}
static void mma_ceilings(const cudaDeviceProp &p, int reps) {
    // bf16/fp16 mma: A = 1.0 everywhere, B = 0.5 everywhere -> each output += 16 * 0.5 = 8 per mma
    mma_test<0>("bf16_mma_sync", 0x3F803F80u, 0x3F003F00u, 8.f, 16, reps);
    mma_test<1>("fp16_mma_sync", 0x3C003C00u, 0x38003800u, 8.f, 16, reps);
    if (p.major > 8 || (p.major == 8 && p.minor >= 9))  // e4m3: 1.0 = 0x38, 0.5 = 0x30; k = 32 -> += 16
        mma_test<2>("fp8_mma_sync", 0x38383838u, 0x30303030u, 16.f, 32, reps);
}

// ------------------------------------------------------------------ main
int main(int argc, char **argv) {
    bool quick = false;
    std::string section = "all";
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--quick")) quick = true;
        else if (!std::strcmp(argv[i], "--section") && i + 1 < argc) section = argv[++i];
        else { std::fprintf(stderr, "usage: probe [--quick] [--section NAME]\n"); return 2; }
    }
    const char *known[] = {"all", "memory", "fma", "mma", "floors", "per_sm", "latency", "residency", "ops"};
    bool ok = false; for (const char *k : known) ok = ok || section == k;
    if (!ok) { std::fprintf(stderr, "unknown section %s\n", section.c_str()); return 2; }
    auto want = [&](const char *name) { return section == name || (section == "all" && (!quick || (std::strcmp(name, "residency") &&
                                                 std::strcmp(name, "ops") && std::strcmp(name, "per_sm") && std::strcmp(name, "latency")))); };
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) { std::fprintf(stderr, "no CUDA GPU: %s\n", e == cudaSuccess ? "0 devices" : cudaGetErrorString(e)); return 5; }
    cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
    g_sms = p.multiProcessorCount;
    int drv = 0, rtv = 0; CK(cudaDriverGetVersion(&drv)); CK(cudaRuntimeGetVersion(&rtv));
    int clk = 0, memclk = 0; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0); cudaDeviceGetAttribute(&memclk, cudaDevAttrMemoryClockRate, 0);
    cudaGetLastError();
    jraw("{\"device\":{\"name\":" + jstr(p.name) + ",\"cc\":\"" + std::to_string(p.major) + "." + std::to_string(p.minor) +
         "\",\"sm_count\":" + std::to_string(p.multiProcessorCount) + ",\"l2_bytes\":" + std::to_string(p.l2CacheSize) +
         ",\"total_mem_bytes\":" + std::to_string(p.totalGlobalMem) + ",\"smem_per_sm\":" + std::to_string(p.sharedMemPerMultiprocessor) +
         ",\"smem_per_block_optin\":" + std::to_string(p.sharedMemPerBlockOptin) + ",\"reserved_smem_per_block\":" + std::to_string(p.reservedSharedMemPerBlock) +
         ",\"regs_per_sm\":" + std::to_string(p.regsPerMultiprocessor) + ",\"max_threads_per_sm\":" + std::to_string(p.maxThreadsPerMultiProcessor) +
         ",\"max_blocks_per_sm\":" + std::to_string(p.maxBlocksPerMultiProcessor) + ",\"bus_width_bits\":" + std::to_string(p.memoryBusWidth) +
         ",\"clock_khz\":" + std::to_string(clk) + ",\"mem_clock_khz\":" + std::to_string(memclk) +
         ",\"cuda_driver_version\":" + std::to_string(drv) + ",\"cuda_runtime_version\":" + std::to_string(rtv) + "}");
    int reps = quick ? 10 : 30;
    if (want("memory") || want("fma") || want("mma") || want("floors")) {
        jraw(",\"ceilings\":[");
        if (want("memory")) { progress("device memory and L2 ceilings"); memory_tests(p.l2CacheSize, reps); }
        if (want("fma")) { progress("FMA ceilings"); fma_ceilings(reps); }
        if (want("mma")) { progress("mma.sync ceilings"); mma_ceilings(p, reps); }
        if (want("floors")) { progress("launch overhead"); launch_overhead_test(); }
        jraw("]");
    }
    if (want("floors")) { jraw(",\"floors\":"); floor_tests(quick); }
    if (want("per_sm")) { jraw(",\"per_sm\":"); per_sm_tests(p, quick); }
    if (want("latency")) { jraw(",\"latency\":["); latency_tests(p, quick); jraw("]"); }
    if (want("residency")) { progress("block residency"); jraw(",\"occupancy\":["); residency_tests(); jraw("]"); }
    if (want("ops")) { progress("op kernels"); jraw(",\"ops\":["); op_tests(reps); jraw("]"); }
    jraw("}");
    std::printf("%s\n", out.c_str());
    return 0;
}
