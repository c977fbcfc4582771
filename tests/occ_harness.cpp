// Differential-test harness: NVIDIA's cuda_occupancy.h as the oracle for roofcalc's solver.
// argv: major minor maxThreadsPerBlock maxThreadsPerSM regsPerBlock regsPerSM warpSize
//       smemPerBlock smemPerSM smemPerBlockOptin reservedSmemPerBlock numSms
// stdin: one configuration per line: threads regs dynamicSmem staticSmem carveout barriers
// stdout: one line per configuration: blocks limitingFactors (or "error N")
#include <cstdio>
#include <cstdlib>
#include "cuda_occupancy.h"

int main(int argc, char **argv) {
    if (argc != 13) { std::fprintf(stderr, "usage: see source\n"); return 2; }
    cudaOccDeviceProp p;
    p.computeMajor = std::atoi(argv[1]);
    p.computeMinor = std::atoi(argv[2]);
    p.maxThreadsPerBlock = std::atoi(argv[3]);
    p.maxThreadsPerMultiprocessor = std::atoi(argv[4]);
    p.regsPerBlock = std::atoi(argv[5]);
    p.regsPerMultiprocessor = std::atoi(argv[6]);
    p.warpSize = std::atoi(argv[7]);
    p.sharedMemPerBlock = std::strtoull(argv[8], nullptr, 10);
    p.sharedMemPerMultiprocessor = std::strtoull(argv[9], nullptr, 10);
    p.sharedMemPerBlockOptin = std::strtoull(argv[10], nullptr, 10);
    p.reservedSharedMemPerBlock = std::strtoull(argv[11], nullptr, 10);
    p.numSms = std::atoi(argv[12]);
    int threads, regs, carveout, barriers;
    unsigned long long dyn, stat;
    while (std::scanf("%d %d %llu %llu %d %d", &threads, &regs, &dyn, &stat, &carveout, &barriers) == 6) {
        cudaOccFuncAttributes a;             // as the runtime converts cudaFuncAttributes:
        a.maxThreadsPerBlock = 1024;
        a.numRegs = regs;
        a.sharedSizeBytes = stat;
        a.partitionedGCConfig = PARTITIONED_GC_OFF;
        a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
        a.maxDynamicSharedSizeBytes = dyn;    // the kernel opted in to what it launches with
        a.numBlockBarriers = barriers;
        a.virtualResourceCount = 0;
        cudaOccDeviceState s;
        s.carveoutConfig = carveout;
        cudaOccResult r;
        cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, threads, dyn);
        if (e != CUDA_OCC_SUCCESS) { std::printf("error %d\n", (int)e); continue; }
        std::printf("%d %u\n", r.activeBlocksPerMultiprocessor, r.limitingFactors);
    }
    return 0;
}
