/*
 * An LD_PRELOAD shim that counts the OpenCL buffers a process creates (clCreateBuffer) and their bytes, printed at
 * exit as "device buffers: N created, M released, B bytes". On a CUDA Context each such buffer is a cuMemAlloc, and
 * its release a cuMemFree, which waits for the whole device; tools/device-allocations/count.sh runs a benchmark with
 * it to find the buffers made per MD step. The real functions are taken from libOpenCL.so.1 (the OpenCL platform
 * is a plugin opened with RTLD_LOCAL, so RTLD_NEXT does not see them).
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static long created = 0, released = 0;
static double bytes = 0;

static void *openCL(const char *name) {
    void *library = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL);
    void *symbol = library ? dlsym(library, name) : NULL;
    if (!symbol) {
        fprintf(stderr, "countOpenCLBuffers: %s not found in libOpenCL.so.1\n", name);
        abort();
    }
    return symbol;
}

static void report(void) {
    fprintf(stderr, "device buffers: %ld created, %ld released, %.0f bytes\n", created, released, bytes);
}

cl_mem clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void *host, cl_int *error) {
    static cl_mem (*real)(cl_context, cl_mem_flags, size_t, void *, cl_int *) = NULL;
    if (!real) {
        real = (cl_mem(*)(cl_context, cl_mem_flags, size_t, void *, cl_int *)) openCL("clCreateBuffer");
        atexit(report);
    }
    created++;
    bytes += (double) size;
    return real(context, flags, size, host, error);
}

cl_int clReleaseMemObject(cl_mem buffer) {
    static cl_int (*real)(cl_mem) = NULL;
    if (!real)
        real = (cl_int(*)(cl_mem)) openCL("clReleaseMemObject");
    released++;
    return real(buffer);
}
