#!/bin/sh
# Makes the CSV tables of the experiments in docs/images.md (outside the repo).
# mnist_train.csv / mnist_test.csv: go run -tags openblas ./examples/mnist --export $DIR
# tr3k.csv / va2k.csv: 3 000 and 2 000 other training digits, drawn by a seeded
# shuffle (mawk 1.3.4 srand(1), Debian's awk; another awk draws other rows).
# md5: tr3k.csv 5a7c6446d61bd5c90d3d0fe9e43bfe20, va2k.csv 0d86e5ab47744a990ca1d37b5c707d6d
set -e
DIR=${1:-/tmp/img/csv}
go run -tags openblas ./examples/mnist --export "$DIR"
cd "$DIR"
(head -1 mnist_train.csv; tail -n +2 mnist_train.csv | awk 'BEGIN{srand(1)}{printf "%.12f,%s\n", rand(), $0}' | sort -t, -k1,1 | cut -d, -f2- ) > shuf.csv
(head -1 shuf.csv; sed -n 2,3001p shuf.csv) > tr3k.csv
(head -1 shuf.csv; sed -n 3002,5001p shuf.csv) > va2k.csv
