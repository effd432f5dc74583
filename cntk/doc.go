// Package cntk computes the exact convolutional neural tangent kernel (CNTK)
// that image inpainting with an infinitely wide encoder–decoder network
// amounts to (Radhakrishnan's thesis, chapter 3, SI appendices K–M), and
// inpaints images with it.
//
// # The network
//
// A network g maps a fixed feature prior Z (c channels on the H×W pixel
// grid) to an H×W image; training g on the observed pixels of one image by
// gradient descent at infinite width is kernel regression with the CNTK
// K(x, x') = ⟨∂g(x)/∂W, ∂g(x')/∂W⟩ between output pixels x and x'. The
// architecture (Arch) is, with circular padding throughout and the NTK
// parameterisation (weights N(0, 1), each layer scaled by 1/√(fan-in)):
//
//	encoder, s times:  q×q convolution → activation → keep the even positions
//	                   (a stride-2 convolution)
//	decoder, s times:  nearest-neighbour upsampling ×2 → q×q convolution → activation
//	output:            q×q convolution to one channel, no activation
//
// The activation is a leaky ReLU max(u, αu) (α = 0 is the ReLU, α = 1
// linear, α = −1 the absolute value: the positively homogeneous
// activations), normalised so that E φ(g)² = 1 for g ~ N(0, 1).
//
// The kernel follows the layer recursion of Arora et al. on pairs of
// positions (convolution: average over the q×q window of (x+o, x'+o);
// activation: the dual φ̌ of φ and its derivative; stride 2: keep even
// positions; upsampling: index by ⌊x/2⌋, SI appendix K's corollaries).
//
// # Feature priors
//
// PriorUniform: i.i.d. U[a, b] entries (U[0, 0.1] in the thesis). With
// Channels = 0 (the default) the prior's Gram is its infinite-channel limit:
// E[u²] = (a²+ab+b²)/3 on the diagonal, (a+b)²/4 elsewhere; with Channels > 0
// a seeded draw of that many channels is used (not expandable).
// PriorIdentity: one channel holding the identity matrix as an image
// (Z(i, j) = 1 where i = j, else 0: the thesis's "identity" input of figure
// 3-4, whose kernels translate pixels across the diagonal). PriorMeshgrid:
// two channels holding the row and column coordinates in (0, 1].
// PriorOneHot: one channel per pixel, so the Gram is the identity. The
// identity and meshgrid priors are not stationary: only their direct kernel
// exists (small images).
//
// # The expansion theorem
//
// For the uniform (infinite-channel) and one-hot priors, whose Gram takes
// one value on the diagonal and another off it, K(x, x') depends only on x
// modulo P = 2^s and on the circular offset x' − x, and equals one "far"
// constant (the kernel's minimum) once the offset reaches P in either
// coordinate (SI appendix L). So the kernel of a 2^(s+1)×2^(s+1) image,
// computed by the recursion in O(4^(2s+1)) memory, gives the exact kernel of
// any H×W image with H and W multiples of P and at least 2P (Expand). The
// expanded kernel is stored as P² windows of (2P−1)² offsets: 2 MB for s = 4,
// 32 MB for s = 5, whatever the image size.
//
// # Inpainting
//
// Inpaint solves K_OO α = y_O over the observed pixels O and predicts
// K_MO α at the missing ones (channels share the kernel, so an RGB image is
// three right-hand sides of one system). Small systems are factorised
// (Cholesky); large ones use conjugate gradients whose products with K_OO
// are done on the whole grid with the expanded kernel's window, never
// forming the n×n matrix. Weights gives, for one missing pixel, the weight
// of every observed pixel in its prediction (the thesis's figure 3-4).
package cntk
