//go:build openblas

/* Element-wise kernel passes for the cgo backend: squared distances from the
 * GEMM expansion, then phi(s) = exp(-C s^P) or the gradient coefficient
 * 2 C P s^(P-1) phi(s).
 *
 * exp and log are branch-free polynomials so that the compiler vectorizes
 * the loops (AVX-512 / AVX2 clones chosen at run time); libm's scalar exp
 * would cost more than the GEMM before it.
 *
 * Accuracy: float64 exp is within ~1 ulp on [-708, 0] (degree-13 Taylor on
 * |r| <= ln2/2), log within a few ulp; values below exp(-708) flush to 0.
 * float32 works in single precision throughout (degree-7 exp).
 */
#include <stdint.h>
#include <string.h>
#include "radial.h"

#define CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

static inline double as_f64(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
static inline uint64_t as_u64(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static inline float as_f32(uint32_t u) { float d; memcpy(&d, &u, 4); return d; }
static inline uint32_t as_u32(float d) { uint32_t u; memcpy(&u, &d, 4); return u; }

/* exp(x) for x <= 0. */
static inline double vexp(double x) {
	const double shift = 0x1.8p52, log2e = 0x1.71547652b82fep0;
	const double ln2hi = 0x1.62e42fefa3800p-1, ln2lo = 0x1.ef35793c76730p-45;
	double under = x < -708.0 ? 0.0 : 1.0;
	x = x < -708.0 ? -708.0 : x;
	double kd = x * log2e + shift;
	double k = kd - shift;
	double r = x - k * ln2hi - k * ln2lo;
	double p = 1.0 / 6227020800.0;
	p = p * r + 1.0 / 479001600.0;
	p = p * r + 1.0 / 39916800.0;
	p = p * r + 1.0 / 3628800.0;
	p = p * r + 1.0 / 362880.0;
	p = p * r + 1.0 / 40320.0;
	p = p * r + 1.0 / 5040.0;
	p = p * r + 1.0 / 720.0;
	p = p * r + 1.0 / 120.0;
	p = p * r + 1.0 / 24.0;
	p = p * r + 1.0 / 6.0;
	p = p * r + 0.5;
	p = p * r + 1.0;
	p = p * r + 1.0;
	/* kd's low mantissa bits hold k (as k + 2^51): shifting by 52 keeps the
	 * low 12 bits, i.e. k + 1023 mod 4096, exact for k in [-1022, 0]. */
	uint64_t scale = (as_u64(kd) + 1023u) << 52;
	return p * as_f64(scale) * under;
}

/* log(x) for normal x > 0: x = m 2^e, m in [sqrt(1/2), sqrt(2)), atanh series. */
static inline double vlog(double x) {
	uint64_t u = as_u64(x);
	double e = as_f64((u >> 52) | 0x4330000000000000ull) - 0x1p52 - 1023.0;
	double m = as_f64((u & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
	double big = m > 1.4142135623730951 ? 1.0 : 0.0;
	m = m * (1.0 - 0.5 * big);
	e = e + big;
	double f = (m - 1.0) / (m + 1.0), f2 = f * f;
	double p = 1.0 / 23;
	p = p * f2 + 1.0 / 21;
	p = p * f2 + 1.0 / 19;
	p = p * f2 + 1.0 / 17;
	p = p * f2 + 1.0 / 15;
	p = p * f2 + 1.0 / 13;
	p = p * f2 + 1.0 / 11;
	p = p * f2 + 1.0 / 9;
	p = p * f2 + 1.0 / 7;
	p = p * f2 + 1.0 / 5;
	p = p * f2 + 1.0 / 3;
	p = p * f2 + 1.0;
	return 2.0 * f * p + e * 0.6931471805599453;
}

/* expf(x) for x <= 0, single precision (degree 7 on |r| <= ln2/2: 2e-8). */
static inline float vexpf(float x) {
	const float shift = 0x1.8p23f, log2e = 0x1.715476p0f;
	const float ln2hi = 0x1.62e4p-1f, ln2lo = 0x1.7f7d1cp-20f;
	float under = x < -87.0f ? 0.0f : 1.0f;
	x = x < -87.0f ? -87.0f : x;
	float kd = x * log2e + shift;
	float k = kd - shift;
	float r = x - k * ln2hi - k * ln2lo;
	float p = 1.0f / 5040.0f;
	p = p * r + 1.0f / 720.0f;
	p = p * r + 1.0f / 120.0f;
	p = p * r + 1.0f / 24.0f;
	p = p * r + 1.0f / 6.0f;
	p = p * r + 0.5f;
	p = p * r + 1.0f;
	p = p * r + 1.0f;
	uint32_t scale = (as_u32(kd) + 127u) << 23;
	return p * as_f32(scale) * under;
}

static inline float vlogf(float x) {
	uint32_t u = as_u32(x);
	float e = (float)(int32_t)(u >> 23) - 127.0f;
	float m = as_f32((u & 0x007fffffu) | 0x3f800000u);
	float big = m > 1.41421356f ? 1.0f : 0.0f;
	m = m * (1.0f - 0.5f * big);
	e = e + big;
	float f = (m - 1.0f) / (m + 1.0f), f2 = f * f;
	float p = 1.0f / 11;
	p = p * f2 + 1.0f / 9;
	p = p * f2 + 1.0f / 7;
	p = p * f2 + 1.0f / 5;
	p = p * f2 + 1.0f / 3;
	p = p * f2 + 1.0f;
	return 2.0f * f * p + e * 0.69314718f;
}

/* sqrt(s) for s >= 0 without libm: with errno semantics (cgo does not accept
 * -fno-math-errno) the compiler will not vectorize a call to sqrt. An
 * inverse-square-root estimate from the exponent-halving bit trick (error
 * below 3.5%), Newton steps (3.5e-2 -> 2e-3 -> 5e-6 -> 4e-11) and one Heron
 * correction (squares the error) give sqrt to about one ulp. */
static inline double vsqrt(double s) {
	double sc = s < 1e-300 ? 1e-300 : s;
	double y = as_f64(0x5fe6eb50c7b537a9ull - (as_u64(sc) >> 1));
	double h = 0.5 * sc;
	y = y * (1.5 - h * y * y);
	y = y * (1.5 - h * y * y);
	y = y * (1.5 - h * y * y);
	double r = sc * y;
	r = r + 0.5 * y * (sc - r * r);
	return s < 1e-300 ? 0.0 : r;
}

static inline float vsqrtf(float s) {
	float sc = s < 1e-37f ? 1e-37f : s;
	float y = as_f32(0x5f375a86u - (as_u32(sc) >> 1));
	float h = 0.5f * sc;
	y = y * (1.5f - h * y * y);
	y = y * (1.5f - h * y * y);
	float r = sc * y;
	r = r + 0.5f * y * (sc - r * r);
	return s < 1e-37f ? 0.0f : r;
}

/* One loop per (exponent case, value or coefficient): straight-line bodies
 * that the compiler vectorizes; all branches are selects. */
#define PASSES(T, SUF, EXP, LOG, SQRT, TINYPOS)                                                    \
	static inline void ev_half_##SUF(T *restrict row, long n, T a, const T *restrict nb, T C) {   \
		for (long j = 0; j < n; j++) {                                                          \
			T s = a + nb[j] - (T)2 * row[j];                                                    \
			s = s < (T)0 ? (T)0 : s;                                                            \
			row[j] = EXP(-C * SQRT(s));                                                         \
		}                                                                                       \
	}                                                                                           \
	static inline void co_half_##SUF(T *restrict row, long n, T a, const T *restrict nb, T C, T tiny, T rel) { \
		for (long j = 0; j < n; j++) {                                                          \
			T s = a + nb[j] - (T)2 * row[j];                                                    \
			T cut = tiny + rel * (a + nb[j]);                                                  \
			T sc = s < cut ? (T)1 : s;                                                         \
			T r = SQRT(sc);                                                                     \
			T k = EXP(-C * r) * C / r;                                                          \
			row[j] = s < cut ? (T)0 : k;                                                        \
		}                                                                                       \
	}                                                                                           \
	static inline void ev_one_##SUF(T *restrict row, long n, T a, const T *restrict nb, T C) {    \
		for (long j = 0; j < n; j++) {                                                          \
			T s = a + nb[j] - (T)2 * row[j];                                                    \
			s = s < (T)0 ? (T)0 : s;                                                            \
			row[j] = EXP(-C * s);                                                               \
		}                                                                                       \
	}                                                                                           \
	static inline void co_one_##SUF(T *restrict row, long n, T a, const T *restrict nb, T C, T tiny, T rel) { \
		for (long j = 0; j < n; j++) {                                                          \
			T s = a + nb[j] - (T)2 * row[j];                                                    \
			s = s < (T)0 ? (T)0 : s;                                                            \
			T cut = tiny + rel * (a + nb[j]);                                                          \
			T k = EXP(-C * s) * ((T)2 * C);                                                     \
			row[j] = s < cut ? (T)0 : k;                                                        \
		}                                                                                       \
	}                                                                                           \
	static inline void ev_pow_##SUF(T *restrict row, long n, T a, const T *restrict nb, T C, T P) { \
		for (long j = 0; j < n; j++) {                                                          \
			T s = a + nb[j] - (T)2 * row[j];                                                    \
			T sc = s < TINYPOS ? TINYPOS : s;                                                   \
			T sp = EXP(P * LOG(sc));                                                            \
			sp = s < TINYPOS ? (T)0 : sp;                                                       \
			row[j] = EXP(-C * sp);                                                              \
		}                                                                                       \
	}                                                                                           \
	static inline void co_pow_##SUF(T *restrict row, long n, T a, const T *restrict nb, T C, T P, T tiny, T rel) { \
		for (long j = 0; j < n; j++) {                                                          \
			T s = a + nb[j] - (T)2 * row[j];                                                    \
			T cut = tiny + rel * (a + nb[j]);                                                   \
			T sc = s < TINYPOS ? TINYPOS : s;                                                   \
			T sp = EXP(P * LOG(sc));                                                            \
			T k = EXP(-C * sp) * ((T)2 * C * P) * sp / sc;                                      \
			row[j] = (s < cut || s < TINYPOS) ? (T)0 : k;                                       \
		}                                                                                       \
	}                                                                                           \
	CLONES long rfm_radial_##SUF(T *g, long lo, long hi, long cols, long ld, const T *na, const T *nb, \
	                             double Cd, double Pd, double tinyd, double reld, int coef, int lower, long row0) { \
		T C = (T)Cd, P = (T)Pd, tiny = (T)tinyd, rel = (T)reld;                                              \
		for (long i = lo; i < hi; i++) {                                                        \
			T *row = g + i * ld;                                                                \
			long n = lower ? (row0 + i + 1 < cols ? row0 + i + 1 : cols) : cols;                \
			T a = na[i];                                                                        \
			if (Pd == 0.5) {                                                                    \
				if (coef) co_half_##SUF(row, n, a, nb, C, tiny, rel);                                \
				else ev_half_##SUF(row, n, a, nb, C);                                           \
			} else if (Pd == 1.0) {                                                             \
				if (coef) co_one_##SUF(row, n, a, nb, C, tiny, rel);                                \
				else ev_one_##SUF(row, n, a, nb, C);                                            \
			} else {                                                                            \
				if (coef) co_pow_##SUF(row, n, a, nb, C, P, tiny, rel);                              \
				else ev_pow_##SUF(row, n, a, nb, C, P);                                         \
			}                                                                                   \
		}                                                                                       \
		return 0;                                                                               \
	}

PASSES(double, f64, vexp, vlog, vsqrt, 1e-300)
PASSES(float, f32, vexpf, vlogf, vsqrtf, 1e-37f)

/* x[j] <- exp(-C x[j]^P) for sums x[j] >= 0 (the lp-laplace kernel's values
 * from its coordinate sums), the same three exponent cases as above. */
CLONES void rfm_exppow_f64(double *restrict x, long n, double C, double P) {
	if (P == 1.0) {
		for (long j = 0; j < n; j++) x[j] = vexp(-C * x[j]);
	} else if (P == 0.5) {
		for (long j = 0; j < n; j++) x[j] = vexp(-C * vsqrt(x[j]));
	} else {
		for (long j = 0; j < n; j++) {
			double s = x[j];
			double sc = s < 1e-300 ? 1e-300 : s;
			double sp = vexp(P * vlog(sc));
			sp = s < 1e-300 ? 0.0 : sp;
			x[j] = vexp(-C * sp);
		}
	}
}

/* out[j] = sum_t |a[t] - bt[t*ld + j]|^p for j < n: one query's coordinate
 * sums against n points stored transposed (coordinate-major), so that each
 * coordinate is a contiguous, vectorizable pass over the points, summed in
 * coordinate order as the scalar Go loop does. Powers 1, 2, 1/2 and 3/2
 * without a power function; others as exp(p log v), 0 where v is 0. */
#define LPSUMS(TI, SUF)                                                                             \
	CLONES void rfm_lpsums_##SUF(const TI *a, long d, const TI *bt, long ld, long n, double p, double *restrict out) { \
		for (long j = 0; j < n; j++) out[j] = 0.0;                                                  \
		for (long t = 0; t < d; t++) {                                                              \
			const TI *restrict row = bt + t * ld;                                                   \
			double at = (double)a[t];                                                               \
			if (p == 1.0) {                                                                         \
				for (long j = 0; j < n; j++) out[j] += __builtin_fabs(at - (double)row[j]);        \
			} else if (p == 2.0) {                                                                  \
				for (long j = 0; j < n; j++) {                                                      \
					double v = at - (double)row[j];                                                 \
					out[j] += v * v;                                                                \
				}                                                                                   \
			} else if (p == 0.5) {                                                                  \
				for (long j = 0; j < n; j++) out[j] += vsqrt(__builtin_fabs(at - (double)row[j])); \
			} else if (p == 1.5) {                                                                  \
				for (long j = 0; j < n; j++) {                                                      \
					double v = __builtin_fabs(at - (double)row[j]);                                 \
					out[j] += v * vsqrt(v);                                                         \
				}                                                                                   \
			} else {                                                                                \
				for (long j = 0; j < n; j++) {                                                      \
					double v = __builtin_fabs(at - (double)row[j]);                                 \
					double vc = v < 1e-300 ? 1e-300 : v;                                            \
					double w = vexp(p * vlog(vc));                                                  \
					out[j] += v < 1e-300 ? 0.0 : w;                                                 \
				}                                                                                   \
			}                                                                                       \
		}                                                                                           \
	}

LPSUMS(double, f64)
LPSUMS(float, f32)

/* sums[j] as rfm_lpsums, and phi[t*n + j] = sign(v) |v|^(p-1),
 * v = a[t] - bt[t*ld + j], 0 where |v| < tiny: the lp-laplace kernel's
 * sums and the coordinate factors of its gradient in one pass (the
 * factor is the term over |v|; the kernel is not differentiable where a
 * coordinate difference vanishes when p <= 1, and the term is dropped). */
#define LPSUMSPHI(TI, SUF)                                                                          \
	CLONES void rfm_lpsumsphi_##SUF(const TI *a, long d, const TI *bt, long ld, long n, double p, double tiny, \
	                                double *restrict sums, double *restrict phi) {                  \
		for (long j = 0; j < n; j++) sums[j] = 0.0;                                                 \
		for (long t = 0; t < d; t++) {                                                              \
			const TI *restrict row = bt + t * ld;                                                   \
			double *restrict out = phi + t * n;                                                     \
			double at = (double)a[t];                                                               \
			if (p == 1.0) {                                                                         \
				for (long j = 0; j < n; j++) {                                                      \
					double v = at - (double)row[j], u = __builtin_fabs(v);                          \
					sums[j] += u;                                                                   \
					out[j] = u < tiny ? 0.0 : (v < 0.0 ? -1.0 : 1.0);                               \
				}                                                                                   \
			} else if (p == 2.0) {                                                                  \
				for (long j = 0; j < n; j++) {                                                      \
					double v = at - (double)row[j];                                                 \
					sums[j] += v * v;                                                               \
					out[j] = __builtin_fabs(v) < tiny ? 0.0 : v;                                    \
				}                                                                                   \
			} else if (p == 0.5) {                                                                  \
				for (long j = 0; j < n; j++) {                                                      \
					double v = at - (double)row[j], u = __builtin_fabs(v);                          \
					double w = vsqrt(u);                                                            \
					sums[j] += w;                                                                   \
					double f = 1.0 / (u < tiny ? 1.0 : w);                                          \
					out[j] = u < tiny ? 0.0 : (v < 0.0 ? -f : f);                                   \
				}                                                                                   \
			} else if (p == 1.5) {                                                                  \
				for (long j = 0; j < n; j++) {                                                      \
					double v = at - (double)row[j], u = __builtin_fabs(v);                          \
					double f = vsqrt(u);                                                            \
					sums[j] += u * f;                                                               \
					out[j] = u < tiny ? 0.0 : (v < 0.0 ? -f : f);                                   \
				}                                                                                   \
			} else {                                                                                \
				for (long j = 0; j < n; j++) {                                                      \
					double v = at - (double)row[j], u = __builtin_fabs(v);                          \
					double uc = u < 1e-300 ? 1.0 : u;                                               \
					double w = vexp(p * vlog(uc));                                                  \
					w = u < 1e-300 ? 0.0 : w;                                                       \
					sums[j] += w;                                                                   \
					double f = w / (u < tiny ? 1.0 : u);                                            \
					out[j] = u < tiny ? 0.0 : (v < 0.0 ? -f : f);                                   \
				}                                                                                   \
			}                                                                                       \
		}                                                                                           \
	}

LPSUMSPHI(double, f64)
LPSUMSPHI(float, f32)

/* x[j] <- x[j]^P for x[j] > 0 (0 where x[j] is 0). */
CLONES void rfm_pow_f64(double *restrict x, long n, double P) {
	for (long j = 0; j < n; j++) {
		double s = x[j];
		double e = P * vlog(s < 1e-300 ? 1.0 : s);
		double w = vexp(e > 709.0 ? 709.0 : e); /* vexp is not for overflow */
		x[j] = s < 1e-300 ? 0.0 : w;
	}
}
