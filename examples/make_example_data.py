#!/usr/bin/python3
"""Writes the sample inputs and NumPy reference outputs of every example.

Run with Debian's /usr/bin/python3 (it has NumPy):

    /usr/bin/python3 examples/make_example_data.py

For each example <name> it writes examples/<name>/inputs/<input>.npy and
examples/<name>/expected/<output>.npy. Every example draws from its own seeded
generator, so the files are the same on every run and adding an example does
not change the others.

The reference for each example is a plain NumPy formulation of the math,
written from the description in the example's README, not from its JSON. It
computes in float32 the way the program does (one rounding per step), so a
runtime result should agree to a few ulps, except for sums, which may
reassociate. Each reference is also cross-checked, in float64, against a
second formulation that differs from the first; a mismatch stops the script.
"""

import os

import numpy as np

EXAMPLES_DIR = os.path.dirname(os.path.abspath(__file__))
f32 = np.float32


def rng_for(seed):
    return np.random.default_rng(seed)


def normal(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(f32)


def write_example(name, inputs, expected):
    """Saves every array of inputs and expected under examples/<name>/."""
    for sub, arrays in (("inputs", inputs), ("expected", expected)):
        folder = os.path.join(EXAMPLES_DIR, name, sub)
        os.makedirs(folder, exist_ok=True)
        for array_name, array in arrays.items():
            array = np.array(array, order="C")  # keeps 0-d arrays 0-d
            np.save(os.path.join(folder, array_name + ".npy"), array)


def check_close(what, got, want, rtol=1e-5, atol=1e-6):
    if not np.allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                       rtol=rtol, atol=atol):
        raise SystemExit(f"cross-check failed: {what}")


def softmax_last_axis(x):
    """Row softmax in the program's own order: shift by max, exp, normalise."""
    shifted = x - x.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def softmax_via_logsumexp(x64):
    """Second formulation: exp(x - log(sum(exp(x - m))) - m), in float64."""
    x64 = np.asarray(x64, np.float64)
    m = np.max(x64, axis=-1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(x64 - m), axis=-1, keepdims=True))
    return np.exp(x64 - lse)


def make_mlp():
    rng = rng_for(101)
    x = normal(rng, (4, 16))
    w1 = normal(rng, (16, 32), 0.25)
    b1 = normal(rng, (32,), 0.1)
    w2 = normal(rng, (32, 10), 1 / np.sqrt(32))
    b2 = normal(rng, (10,), 0.1)

    hidden = np.maximum(x @ w1 + b1, f32(0))
    y = hidden @ w2 + b2

    x64, w164, w264 = (a.astype(np.float64) for a in (x, w1, w2))
    pre = np.einsum("bi,ij->bj", x64, w164) + b1
    y64 = np.einsum("bj,jk->bk", np.where(pre > 0, pre, 0.0), w264) + b2
    check_close("mlp", y, y64, rtol=1e-4, atol=1e-5)

    write_example("mlp", dict(x=x, w1=w1, b1=b1, w2=w2, b2=b2), dict(y=y))


def make_softmax():
    rng = rng_for(102)
    x = normal(rng, (5, 8), 2.0)
    x[0, :] = 0           # a row of ties: every weight is 1/8
    x[1, 3] = 30          # a dominant entry: the row is nearly one-hot

    y = softmax_last_axis(x)

    check_close("softmax", y, softmax_via_logsumexp(x))
    check_close("softmax rows sum to 1", y.sum(axis=1), np.ones(5))
    write_example("softmax", dict(x=x), dict(y=y))


def make_layer_norm():
    rng = rng_for(103)
    x = normal(rng, (4, 16), 3.0) + f32(1.5)
    gamma = (1 + normal(rng, (16,), 0.2)).astype(f32)
    beta = normal(rng, (16,), 0.2)
    eps = f32(1e-5)

    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps) * gamma + beta

    x64 = x.astype(np.float64)
    y64 = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True)
                                                      + 1e-5) * gamma + beta
    check_close("layer_norm", y, y64, rtol=1e-4, atol=1e-5)
    write_example("layer_norm", dict(x=x, gamma=gamma, beta=beta), dict(y=y))


def make_embedding():
    rng = rng_for(104)
    table = normal(rng, (20, 8))
    ids = np.array([3, 7, 3, 0, 19, 7], dtype=np.int32)  # 3 and 7 repeat
    grad = normal(rng, (6, 8), 0.5)

    rows = table[ids]
    table_updated = table.copy()
    np.add.at(table_updated, ids, grad)

    want = table.astype(np.float64)
    for t, row in enumerate(ids):
        want[row] += grad[t]
    check_close("embedding rows", rows, np.stack([table[i] for i in ids]), 0, 0)
    check_close("embedding scatter-add", table_updated, want)
    write_example("embedding", dict(table=table, ids=ids, grad=grad),
                  dict(rows=rows, table_updated=table_updated))


def make_attention():
    rng = rng_for(105)
    heads, steps, width = 2, 5, 16
    q = normal(rng, (heads, steps, width))
    k = normal(rng, (heads, steps, width))
    v = normal(rng, (heads, steps, width))

    scores = np.matmul(q, k.transpose(0, 2, 1)) * f32(1 / np.sqrt(width))
    causal = np.tril(np.ones((steps, steps), dtype=bool))
    weights = softmax_last_axis(np.where(causal, scores, f32(-np.inf)))
    context = np.matmul(weights, v)

    # Second formulation: a loop over heads and query positions, attending
    # only to keys 0..t, in float64.
    context64 = np.zeros((heads, steps, width))
    for h in range(heads):
        for t in range(steps):
            s = k[h, :t + 1].astype(np.float64) @ q[h, t] / np.sqrt(width)
            p = np.exp(s - s.max())
            context64[h, t] = (p / p.sum()) @ v[h, :t + 1]
            check_close("attention weights", weights[h, t, :t + 1], p / p.sum())
    check_close("attention masked weights are 0", weights[:, ~causal], 0, 0, 0)
    check_close("attention", context, context64, rtol=1e-4, atol=1e-5)
    write_example("attention", dict(q=q, k=k, v=v), dict(context=context, weights=weights))


def make_elementwise_chain():
    rng = rng_for(106)
    a = normal(rng, (32,))
    b = normal(rng, (32,))
    c = normal(rng, (32,))

    y = np.tanh(a * b + c) * f32(0.5) + a

    ab_c = a.astype(np.float64) * b + c
    y64 = (np.exp(2 * ab_c) - 1) / (np.exp(2 * ab_c) + 1) / 2 + a
    check_close("elementwise_chain", y, y64)
    write_example("elementwise_chain", dict(a=a, b=b, c=c), dict(y=y))


def make_image_preprocess():
    rng = rng_for(107)
    image = rng.integers(0, 256, size=(4, 5, 3), dtype=np.uint8)
    image[0, 0] = [0, 0, 0]
    image[0, 1] = [255, 255, 255]    # normalises above 2: clamped
    mean = np.array([0.485, 0.456, 0.406], dtype=f32)
    std = np.array([0.229, 0.224, 0.225], dtype=f32)

    standardized = (image.astype(f32) / f32(255) - mean) / std
    chw = np.clip(standardized.transpose(2, 0, 1), f32(-2), f32(2))

    want = np.empty((3, 4, 5))
    for ch in range(3):
        want[ch] = (image[:, :, ch] / 255.0 - mean[ch]) / std[ch]
    want = np.minimum(np.maximum(want, -2), 2)
    check_close("image_preprocess", chw, want)
    if not (chw == 2).any():
        raise SystemExit("image_preprocess sample no longer exercises clamp")
    write_example("image_preprocess", dict(image=image, mean=mean, std=std),
                  dict(chw=chw))


def make_moving_average():
    rng = rng_for(108)
    x = normal(rng, (12,))

    padded = np.concatenate([[f32(0)], x, [f32(0)]]).astype(f32)
    y = (padded[:-2] + padded[1:-1] + padded[2:]) / f32(3)

    check_close("moving_average", y, np.convolve(x.astype(np.float64),
                                                 np.ones(3) / 3, mode="same"))
    write_example("moving_average", dict(x=x), dict(y=y))


def make_kv_cache_update():
    """A model with states: three runs with the same inputs write rows 0-2."""
    rng = rng_for(109)
    d, rows, runs = 16, 64, 3
    q = normal(rng, (1, d))
    k_new = normal(rng, (1, d))
    v_new = normal(rng, (1, d))

    k_cache = np.zeros((rows, d), f32)
    v_cache = np.zeros((rows, d), f32)
    for step in range(runs):
        k_cache[step] = k_new[0]
        v_cache[step] = v_new[0]
        scaled = (q @ k_cache.T) * f32(0.25)
        masked = np.where(np.arange(rows)[None, :] <= step, scaled, f32(-np.inf)).astype(f32)
        weights = softmax_last_axis(masked)
        context = weights @ v_cache

    # Cross-check: the rows written are identical, so the attention over them
    # is uniform and the context is v_new itself (float64).
    check_close("kv_cache_update context", context, v_new.astype(np.float64))
    write_example("kv_cache_update", dict(q=q, k_new=k_new, v_new=v_new), dict(context=context))
    with open(os.path.join(EXAMPLES_DIR, "kv_cache_update", "repeat"), "w") as f:
        f.write(f"{runs}\n")


def make_prefix_sum():
    rng = rng_for(110)
    x = normal(rng, (10,))

    prefix = np.cumsum(x, dtype=f32)
    suffix = np.cumsum(x[::-1], dtype=f32)[::-1]

    x64 = x.astype(np.float64)
    check_close("prefix_sum prefix", prefix, [x64[:i + 1].sum() for i in range(10)])
    check_close("prefix_sum suffix", suffix, [x64[i:].sum() for i in range(10)])
    write_example("prefix_sum", dict(x=x), dict(prefix=prefix, suffix=suffix))


def make_transformer_block():
    """tenact.layer_norm, softmax, rms_norm, gelu and log_softmax in one block.

    The reference is float64 throughout, rounded to float32 at the end; the
    cross-check is the same block computed step by step in float32.
    """
    import math
    rng = rng_for(111)
    t, d, ff, classes = 8, 16, 32, 10
    x = normal(rng, (t, d))
    ln_g = (1 + normal(rng, (d,), 0.1)).astype(f32)
    ln_b = normal(rng, (d,), 0.1)
    wq, wk, wv, wo = (normal(rng, (d, d), 0.25) for _ in range(4))
    rms_g = (1 + normal(rng, (d,), 0.1)).astype(f32)
    w1 = normal(rng, (d, ff), 0.25)
    w2 = normal(rng, (ff, d), 0.18)
    wout = normal(rng, (d, classes), 0.25)
    erf = np.vectorize(math.erf)

    def block(dt):
        c = lambda a: np.asarray(a, dt)
        xx = c(x)
        mean = xx.mean(axis=1, keepdims=True)
        var = ((xx - mean) ** 2).mean(axis=1, keepdims=True)
        h = (xx - mean) / np.sqrt(var + c(1e-5)) * c(ln_g) + c(ln_b)
        q, k, v = h @ c(wq), h @ c(wk), h @ c(wv)
        s = (q @ k.T) * c(0.25)
        e = np.exp(s - s.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        r = xx + (p @ v) @ c(wo)
        n = r / np.sqrt((r * r).mean(axis=1, keepdims=True) + c(1e-6)) * c(rms_g)
        f1 = n @ c(w1)
        g = f1 * (1 + c(erf(f1 / math.sqrt(2)))) / 2
        y = r + g @ c(w2)
        logits = y @ c(wout)
        m = logits.max(axis=1, keepdims=True)
        logp = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
        return y, logp

    y64, logp64 = block(np.float64)
    y32, logp32 = block(f32)
    check_close("transformer_block y", y32, y64, rtol=1e-4, atol=1e-5)
    check_close("transformer_block logp", logp32, logp64, rtol=1e-4, atol=1e-5)
    # log_softmax rows are log-probabilities: they sum to 1 after exp.
    check_close("transformer_block logp normalised", np.exp(logp64).sum(axis=1), np.ones(t))
    write_example("transformer_block",
                  dict(x=x, ln_g=ln_g, ln_b=ln_b, wq=wq, wk=wk, wv=wv, wo=wo, rms_g=rms_g,
                       w1=w1, w2=w2, wout=wout),
                  dict(y=y64.astype(f32), logp=logp64.astype(f32)))


def main():
    make_mlp()
    make_softmax()
    make_layer_norm()
    make_embedding()
    make_attention()
    make_elementwise_chain()
    make_image_preprocess()
    make_moving_average()
    make_kv_cache_update()
    make_prefix_sum()
    make_transformer_block()


if __name__ == "__main__":
    main()
