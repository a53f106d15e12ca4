/* scalar.cl — element-wise arithmetic of an array with one scalar, a[i] = a[i] op v, and fills. */

/* Build options: -DT=char|short|int|long|uchar|...|float|double (the element
 * type), -DKIND=0|1|2 (signed integer, unsigned integer, floating point),
 * -DFP64 for double.  The operation is a kernel argument, so one program
 * serves all four per dtype. */
#ifdef FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define OP_ADD 1
#define OP_SUB 2
#define OP_MUL 3
#define OP_DIV 4

#if KIND == 2
T apply(T x, T v, int op)
{
    switch (op) {
    case OP_ADD: return x + v;
    case OP_SUB: return x - v;
    case OP_MUL: return x * v;
    default: return x / v;
    }
}
#else
/* Integers wrap modulo 2^bits: computed in ulong, where wrapping is defined,
 * then truncated.  The host refused division by zero; x / -1 is the one
 * quotient that overflows (MIN / -1), so it is computed as a wrapping 0 - x. */
T apply(T x, T v, int op)
{
    switch (op) {
    case OP_ADD: return (T)((ulong)x + (ulong)v);
    case OP_SUB: return (T)((ulong)x - (ulong)v);
    case OP_MUL: return (T)((ulong)x * (ulong)v);
    default:
#if KIND == 0
        if (v == (T)-1)
            return (T)(0 - (ulong)x);
#endif
        return x / v;
    }
}
#endif

kernel void scalar_op(global T *a, ulong n, T v, int op)
{
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
        a[i] = apply(a[i], v, op);
}

/* a[i] = v on GPUs: NVIDIA's clEnqueueFillBuffer (8-byte pattern) stored
 * 2^27 int64 in 0.321 ms on an H200, a loop like this one in 0.239 ms
 * (bench/experiments/fillprobe.c). */
kernel void scalar_fill(global T *a, ulong n, T v)
{
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
        a[i] = v;
}
