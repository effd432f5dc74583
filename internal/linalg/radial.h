/* Vectorizable element-wise kernels for the cgo backend.
 *
 * exp and log are written out as branch-free polynomials so that the C
 * compiler turns the loops into AVX2 / AVX-512 code; libm's scalar exp would
 * make this pass cost more than the GEMM it follows. Accuracy: about 1 ulp
 * for exp on [-708, 0] (Taylor series to degree 13 on |r| <= ln2/2) and a few
 * ulp for log (atanh series); results below exp(-708) are flushed to 0.
 */
#ifndef RFM_RADIAL_H
#define RFM_RADIAL_H
long rfm_radial_f64(double *g, long lo, long hi, long cols, long ld, const double *na, const double *nb,
                    double C, double P, double tiny, double rel, int coef, int lower, long row0);
long rfm_radial_f32(float *g, long lo, long hi, long cols, long ld, const float *na, const float *nb,
                    double C, double P, double tiny, double rel, int coef, int lower, long row0);
void rfm_exppow_f64(double *x, long n, double C, double P);
void rfm_lpsums_f64(const double *a, long d, const double *bt, long ld, long n, double p, double *out);
void rfm_lpsums_f32(const float *a, long d, const float *bt, long ld, long n, double p, double *out);
void rfm_lpsumsphi_f64(const double *a, long d, const double *bt, long ld, long n, double p, double tiny, double *sums, double *phi);
void rfm_lpsumsphi_f32(const float *a, long d, const float *bt, long ld, long n, double p, double tiny, double *sums, double *phi);
void rfm_pow_f64(double *x, long n, double P);
#endif
