"""numpy's pairwise leaf sum of (q - x)^2 on 8-wide vectors, for ``_numba_kernels``.

numpy sums a contiguous row of at most 128 terms with 8 accumulators, term t into
accumulator t mod 8, then combines them as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) +
(r6 + r7)) and adds the remaining terms one by one. Those 8 accumulators are the 8
lanes of one vector: the same additions, in the same order, lane by lane, so the
bits are those of the scalar code (``_numba_kernels._leaf_scalar``) and of
``np.add.reduce``. numba's own code keeps the 8 accumulators in scalar registers
(LLVM does not vectorise them); this writes the vector loop in LLVM IR directly
(``numba.extending.intrinsic``): about half the time of the scalar sum on yeast's
103 features, with no fast-math flags (no reassociation, no fused multiply-add).

Imported only by ``_numba_kernels`` (which only ``_compiled`` imports).
"""

from typing import Any

from llvmlite import ir  # numba's own dependency (no stubs: ignored in pyproject)
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _is_contiguous_float_row(a: Any) -> bool:
    return (
        isinstance(a, types.Array)
        and a.ndim == 1
        and a.layout == "C"
        and a.dtype in (types.float32, types.float64)
    )


@intrinsic
def vector_leaf(typingctx: Any, q: Any, x: Any) -> Any:
    """sum((float64(q) - float64(x))^2) over a contiguous row, in numpy's pairwise
    leaf order (see the module docstring); rows of any length (beyond 128 terms
    the caller halves them as numpy does, ``_numba_kernels.sqdist``).

    Below 8 terms the lanes stay zero and the terms are added one by one: numpy's
    plain sum, the same bits (adding a square to zero is exact).
    """
    if not (_is_contiguous_float_row(q) and _is_contiguous_float_row(x)):
        return None
    sig = types.float64(q, x)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        f64 = ir.DoubleType()
        v8 = ir.VectorType(f64, 8)
        rows = [context.make_array(ty)(context, builder, a) for ty, a in zip(signature.args, args)]
        elems = [context.get_data_type(ty.dtype) for ty in signature.args]
        n = builder.extract_value(rows[0].shape, 0)
        intp = n.type

        def load8(p: int, off: Any) -> Any:
            ptr = builder.bitcast(builder.gep(rows[p].data, [off]), ir.PointerType(ir.VectorType(elems[p], 8)))
            v = builder.load(ptr, align=1)
            return v if elems[p] == f64 else builder.fpext(v, v8)

        def load1(p: int, off: Any) -> Any:
            v = builder.load(builder.gep(rows[p].data, [off]))
            return v if elems[p] == f64 else builder.fpext(v, f64)

        blocks = builder.sdiv(n, ir.Constant(intp, 8))
        acc = cgutils.alloca_once_value(builder, ir.Constant(v8, [0.0] * 8))  # type: ignore[no-untyped-call]
        with cgutils.for_range(builder, blocks) as loop:
            off = builder.mul(loop.index, ir.Constant(intp, 8))
            e = builder.fsub(load8(0, off), load8(1, off))
            builder.store(builder.fadd(builder.load(acc), builder.fmul(e, e)), acc)
        a = builder.load(acc)
        r = [builder.extract_element(a, ir.Constant(ir.IntType(32), i)) for i in range(8)]
        res = builder.fadd(
            builder.fadd(builder.fadd(r[0], r[1]), builder.fadd(r[2], r[3])),
            builder.fadd(builder.fadd(r[4], r[5]), builder.fadd(r[6], r[7])),
        )
        out = cgutils.alloca_once_value(builder, res)  # type: ignore[no-untyped-call]
        start = builder.mul(blocks, ir.Constant(intp, 8))
        with cgutils.for_range(builder, builder.sub(n, start)) as loop:
            off = builder.add(start, loop.index)
            e = builder.fsub(load1(0, off), load1(1, off))
            builder.store(builder.fadd(builder.load(out), builder.fmul(e, e)), out)
        return builder.load(out)

    return sig, codegen


#: Keys compared at once by :func:`passing_mask` (one AVX-512 register of float32).
MASK_WIDTH = 16


@intrinsic
def passing_mask(typingctx: Any, keys: Any, thr_keys: Any, start: Any, thr: Any) -> Any:
    """Bit ``j`` set where ``keys[start + j] <= max(thr_keys[start + j], thr)``, for
    the ``MASK_WIDTH`` entries from ``start`` of two contiguous float32 rows (the
    caller keeps ``start + MASK_WIDTH`` within both), as an int64.

    One vector comparison whose lanes are the bits (``<16 x i1>`` cast to an
    integer): the symmetric leave-one-out tiles find their rare candidates by
    testing whole groups of keys at once (``_numba_loo.loo_tile``). Ordered
    comparisons, as Python's ``<=``: a NaN never passes.
    """
    f32 = types.float32
    if not (
        isinstance(keys, types.Array) and isinstance(thr_keys, types.Array)
        and keys.ndim == thr_keys.ndim == 1 and keys.layout == thr_keys.layout == "C"
        and keys.dtype == thr_keys.dtype == f32 and isinstance(start, types.Integer) and thr == f32
    ):
        return None
    sig = types.int64(keys, thr_keys, start, thr)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        vec = ir.VectorType(ir.FloatType(), MASK_WIDTH)
        rows = [context.make_array(ty)(context, builder, a) for ty, a in zip(signature.args[:2], args[:2])]
        off = args[2]

        def load(row: Any) -> Any:
            ptr = builder.bitcast(builder.gep(row.data, [off]), ir.PointerType(vec))
            return builder.load(ptr, align=4)

        keys_v, thr_v = load(rows[0]), load(rows[1])
        splat = builder.insert_element(ir.Constant(vec, ir.Undefined), args[3], ir.Constant(ir.IntType(32), 0))
        splat = builder.shuffle_vector(splat, ir.Constant(vec, ir.Undefined),
                                       ir.Constant(ir.VectorType(ir.IntType(32), MASK_WIDTH), [0] * MASK_WIDTH))
        # max(thr_keys, thr) as a select: the thresholds are never NaN.
        bound = builder.select(builder.fcmp_ordered(">", thr_v, splat), thr_v, splat)
        bits = builder.bitcast(builder.fcmp_ordered("<=", keys_v, bound), ir.IntType(MASK_WIDTH))
        return builder.zext(bits, ir.IntType(64))

    return sig, codegen


@intrinsic
def lowest_bit(typingctx: Any, mask: Any) -> Any:
    """The index of the lowest set bit of a non-zero int64 (``llvm.cttz``)."""
    if not isinstance(mask, types.Integer):
        return None
    sig = types.int64(mask)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        value = context.cast(builder, args[0], signature.args[0], types.int64)
        return builder.cttz(value, ir.Constant(ir.IntType(1), 1))

    return sig, codegen


@intrinsic
def prefetch_row(typingctx: Any, X: Any, row: Any) -> Any:
    """Ask the cache for row ``row`` of a 2-D array (``llvm.prefetch`` on each of its
    64-byte lines, for reading, kept in every level); nothing else happens, and an
    array that is not C-contiguous is left alone.

    The re-ranking of the symmetric leave-one-out path (``_numba_loo.loo_rerank``)
    reads the rows of its candidates in no order the hardware can predict: asked
    for a few candidates ahead, the rows arrive while the distances before them are
    summed. ``row`` must be a valid row index.
    """
    if not (isinstance(X, types.Array) and X.ndim == 2 and isinstance(row, types.Integer)):
        return None
    sig = types.void(X, row)
    contiguous = X.layout == "C"

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        if not contiguous:
            return context.get_dummy_value()
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        n_cols = builder.extract_value(ary.shape, 1)
        intp = n_cols.type
        itemsize = context.get_abi_sizeof(context.get_data_type(signature.args[0].dtype))
        index = context.cast(builder, args[1], signature.args[1], types.intp)
        byte = ir.IntType(8).as_pointer()
        base = builder.bitcast(builder.gep(ary.data, [builder.mul(index, n_cols)]), byte)
        i32 = ir.IntType(32)
        fn = builder.module.declare_intrinsic(
            "llvm.prefetch", [byte], ir.FunctionType(ir.VoidType(), [byte, i32, i32, i32])
        )
        n_bytes = builder.mul(n_cols, ir.Constant(intp, itemsize))
        lines = builder.udiv(builder.add(n_bytes, ir.Constant(intp, 63)), ir.Constant(intp, 64))
        with cgutils.for_range(builder, lines) as loop:
            line = builder.gep(base, [builder.mul(loop.index, ir.Constant(intp, 64))])
            # read (0), keep in every cache level (3), data (1)
            builder.call(fn, [line, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen
