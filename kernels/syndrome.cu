// Batched syndrome check for binary QC-LDPC codes.
//
// Implements the parity checks  s = H x^T  (paper 004 section II-B, step 4, "tentative
// decoding": a frame is a codeword iff every check is satisfied) for a batch of hard
// decisions, one thread per (frame, check row).  The code is given as its non-empty
// base-matrix blocks in layer order (see qc_decode.cu, "QC layout"):
//   edges[b] = (j*z + s, z - s)  for block b of the layer:  row r of the layer checks
//   column j*z + (r + s) mod z  (the base-matrix convention of gpuldpc.codes: identity
//   shifted right by s), i.e. r + (j*z + s), minus z when r >= z - s.
//   layer_start[l] .. layer_start[l+1]-1 are the blocks of base row l.
//
// Input  bits   uint8 [frames, n]  (0/1, unpacked hard decisions)
// Output weight int32 [frames]     number of unsatisfied checks (0 = codeword);
//                                  the caller zeroes it before the launch.

extern "C" __global__ void syndrome_weight(const unsigned char* __restrict__ bits,
                                           int* __restrict__ weight,
                                           const int2* __restrict__ edges,
                                           const int* __restrict__ layer_start,
                                           int mb, int n, int z, int frames)
{
    const long long m = (long long)mb * z;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m * frames) return;
    const int frame = (int)(t / m);
    const int row = (int)(t - (long long)frame * m);
    const int layer = row / z;
    const int r = row - layer * z;
    const unsigned char* x = bits + (size_t)frame * n;
    int parity = 0;
    for (int b = layer_start[layer]; b < layer_start[layer + 1]; ++b) {
        const int2 e = edges[b];
        parity ^= x[r + e.x - (r >= e.y ? z : 0)] & 1;
    }
    if (parity) atomicAdd(weight + frame, 1);
}
