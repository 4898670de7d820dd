/*
 * An LD_PRELOAD shim that counts what a process asks of its OpenCL queues: kernel launches (per kernel name), reads
 * and writes of buffers (blocking or not, and their bytes), buffer copies, and the host's waits (clFinish,
 * clWaitForEvents). Printed at exit, to stderr, as lines "queue calls: NAME COUNT" and "kernel launches: NAME COUNT".
 *
 * Why: on a GPU every blocking read or write and every wait stops the host until the device has drained what was
 * queued before it, and every launch costs a few microseconds of the host's time; how many an MD step makes is a
 * property of the code, not of the device, so PoCL (the 2-core VM) counts them as a GPU would see them. OpenMM's CUDA
 * platform maps them one to one: a blocking download is a cuMemcpyDtoH, an upload a cuMemcpyHtoD(Async), a launch a
 * cuLaunchKernel. tools/device-queue-calls/count.sh runs a benchmark with it and prints one steady-state step's share.
 *
 * With COUNT_OPENCL_SITES=1 the blocking reads and writes are also counted per call site ("blocking site: COUNT BYTES
 * FRAMES", the first frames of the caller in the plugin's code, by symbol), to find which code makes them.
 *
 * The real functions are taken from libOpenCL.so.1 (OpenMM's OpenCL platform is a plugin opened with RTLD_LOCAL, so
 * RTLD_NEXT does not see them). Counting is not thread safe beyond what the counters' races cost (a few counts at
 * most, where two threads launch at once; the engine launches from one thread at a time per queue).
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum Counter { LAUNCHES, READS, BLOCKING_READS, READ_BYTES, WRITES, BLOCKING_WRITES, WRITE_BYTES, COPIES, FINISHES, EVENT_WAITS, COUNTERS };
static const char *counterNames[COUNTERS] = {"launches", "reads", "blockingReads", "readBytes", "writes", "blockingWrites",
                                             "writeBytes", "copies", "finishes", "eventWaits"};
static double counts[COUNTERS];

/* Launches per kernel name: an open-addressing table (a program has at most a few hundred kernels). */
#define KERNEL_SLOTS 1024
static struct {
    char name[96];
    long launches;
} kernels[KERNEL_SLOTS];

/* Blocking transfers per call site, where COUNT_OPENCL_SITES is set. */
#define SITE_SLOTS 512
static struct {
    char frames[512];
    long count;
    double bytes;
} sites[SITE_SLOTS];

static void *openCL(const char *name) {
    void *library = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL);
    void *symbol = library ? dlsym(library, name) : NULL;
    if (!symbol) {
        fprintf(stderr, "countOpenCLQueueCalls: %s not found in libOpenCL.so.1\n", name);
        abort();
    }
    return symbol;
}

static void report(void) {
    for (int c = 0; c < COUNTERS; c++)
        fprintf(stderr, "queue calls: %s %.0f\n", counterNames[c], counts[c]);
    for (int k = 0; k < KERNEL_SLOTS; k++)
        if (kernels[k].launches > 0)
            fprintf(stderr, "kernel launches: %s %ld\n", kernels[k].name, kernels[k].launches);
    for (int k = 0; k < SITE_SLOTS; k++)
        if (sites[k].count > 0)
            fprintf(stderr, "blocking site: %ld %.0f %s\n", sites[k].count, sites[k].bytes, sites[k].frames);
}

/* The caller's frames in the plugin (symbols naming OpenMMDFT), the first four, as one string. */
static void countSite(const char *kind, size_t bytes) {
    static int enabled = -1;
    if (enabled < 0)
        enabled = getenv("COUNT_OPENCL_SITES") != NULL;
    if (!enabled)
        return;
    void *addresses[40];
    const int depth = backtrace(addresses, 40);
    char key[512];
    snprintf(key, sizeof(key), "%s", kind);
    int taken = 0;
    for (int i = 1; i < depth && taken < 4; i++) {
        Dl_info info;
        if (dladdr(addresses[i], &info) && info.dli_sname && strstr(info.dli_sname, "OpenMMDFT")) {
            const size_t used = strlen(key);
            snprintf(key + used, sizeof(key) - used, " <- %s", info.dli_sname);
            taken++;
        }
    }
    unsigned long hash = 5381;
    for (const char *c = key; *c; c++)
        hash = hash * 33 + (unsigned char) *c;
    for (int probe = 0; probe < SITE_SLOTS; probe++) {
        const int slot = (int) ((hash + probe) % SITE_SLOTS);
        if (sites[slot].count == 0 || strcmp(sites[slot].frames, key) == 0) {
            strcpy(sites[slot].frames, key);
            sites[slot].count++;
            sites[slot].bytes += (double) bytes;
            return;
        }
    }
}

static void registerReport(void) {
    static int registered = 0;
    if (!registered) {
        registered = 1;
        atexit(report);
    }
}

static void countKernel(cl_kernel kernel) {
    static cl_int (*info)(cl_kernel, cl_kernel_info, size_t, void *, size_t *) = NULL;
    if (!info)
        info = (cl_int(*)(cl_kernel, cl_kernel_info, size_t, void *, size_t *)) openCL("clGetKernelInfo");
    char name[96] = "?";
    if (info(kernel, CL_KERNEL_FUNCTION_NAME, sizeof(name), name, NULL) != CL_SUCCESS)
        strcpy(name, "(name longer than 95 characters)");
    unsigned long hash = 5381;
    for (const char *c = name; *c; c++)
        hash = hash * 33 + (unsigned char) *c;
    for (int probe = 0; probe < KERNEL_SLOTS; probe++) {
        const int slot = (int) ((hash + probe) % KERNEL_SLOTS);
        if (kernels[slot].launches == 0) {
            strcpy(kernels[slot].name, name);
            kernels[slot].launches = 1;
            return;
        }
        if (strcmp(kernels[slot].name, name) == 0) {
            kernels[slot].launches++;
            return;
        }
    }
}

cl_int clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t *offset,
                              const size_t *global, const size_t *local, cl_uint numEvents, const cl_event *waitList,
                              cl_event *event) {
    static cl_int (*real)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *, cl_uint,
                          const cl_event *, cl_event *) = NULL;
    if (!real)
        real = (cl_int(*)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *, cl_uint,
                          const cl_event *, cl_event *)) openCL("clEnqueueNDRangeKernel");
    registerReport();
    counts[LAUNCHES]++;
    countKernel(kernel);
    return real(queue, kernel, dims, offset, global, local, numEvents, waitList, event);
}

/* One read or write: its count, whether it blocked (and then its call site), its bytes. */
static void countTransfer(enum Counter total, enum Counter blockingTotal, enum Counter bytes, const char *site, cl_bool blocking, size_t size) {
    registerReport();
    counts[total]++;
    counts[blockingTotal] += blocking ? 1 : 0;
    if (blocking)
        countSite(site, size);
    counts[bytes] += (double) size;
}

cl_int clEnqueueReadBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset, size_t size, void *host,
                           cl_uint numEvents, const cl_event *waitList, cl_event *event) {
    static cl_int (*real)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint, const cl_event *, cl_event *) = NULL;
    if (!real)
        real = (cl_int(*)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint, const cl_event *, cl_event *))
            openCL("clEnqueueReadBuffer");
    countTransfer(READS, BLOCKING_READS, READ_BYTES, "read", blocking, size);
    return real(queue, buffer, blocking, offset, size, host, numEvents, waitList, event);
}

cl_int clEnqueueWriteBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset, size_t size,
                            const void *host, cl_uint numEvents, const cl_event *waitList, cl_event *event) {
    static cl_int (*real)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint, const cl_event *,
                          cl_event *) = NULL;
    if (!real)
        real = (cl_int(*)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint, const cl_event *,
                          cl_event *)) openCL("clEnqueueWriteBuffer");
    countTransfer(WRITES, BLOCKING_WRITES, WRITE_BYTES, "write", blocking, size);
    return real(queue, buffer, blocking, offset, size, host, numEvents, waitList, event);
}

cl_int clEnqueueCopyBuffer(cl_command_queue queue, cl_mem source, cl_mem destination, size_t sourceOffset,
                           size_t destinationOffset, size_t size, cl_uint numEvents, const cl_event *waitList,
                           cl_event *event) {
    static cl_int (*real)(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const cl_event *, cl_event *) = NULL;
    if (!real)
        real = (cl_int(*)(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const cl_event *, cl_event *))
            openCL("clEnqueueCopyBuffer");
    registerReport();
    counts[COPIES]++;
    return real(queue, source, destination, sourceOffset, destinationOffset, size, numEvents, waitList, event);
}

cl_int clFinish(cl_command_queue queue) {
    static cl_int (*real)(cl_command_queue) = NULL;
    if (!real)
        real = (cl_int(*)(cl_command_queue)) openCL("clFinish");
    registerReport();
    counts[FINISHES]++;
    return real(queue);
}

cl_int clWaitForEvents(cl_uint numEvents, const cl_event *events) {
    static cl_int (*real)(cl_uint, const cl_event *) = NULL;
    if (!real)
        real = (cl_int(*)(cl_uint, const cl_event *)) openCL("clWaitForEvents");
    registerReport();
    counts[EVENT_WAITS]++;
    return real(numEvents, events);
}
