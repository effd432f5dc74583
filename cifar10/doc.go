// Package cifar10 reads the CIFAR-10 subset stored in ../shared/data/cifar10
// (Krizhevsky 2009): 10 000 training and 5 000 test images of 32 × 32 RGB
// pixels, saved as gzip-compressed NumPy arrays (train_images.npy.gz of
// shape (n, 32, 32, 3) and train_labels.npy.gz of shape (n,), both uint8,
// and the same for test).
//
// Load returns a training and a test Set with the pixels scaled to [0, 1]
// (exactly k/255 for a byte k), each image a row of 3 072 values in the
// files' (height, width, channel) order. LoadImages and LoadLabels read one
// file each (gzip-compressed or not).
//
// Every loader checks the NPY header (dtype uint8, C order, the expected
// shape), the data length, the labels (0..9) and that images and labels
// agree in number, and names the file in its errors; a corrupted file is an
// error, never a panic, and a compressed file cannot inflate past MaxBytes.
package cifar10
