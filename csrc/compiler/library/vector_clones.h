// The library is built for any x86-64; its vectorized loops are compiled once per vector width
// and the loader picks the copy the CPU runs (x86-64-v3 and up have the FMA the activations'
// polynomials are written with). GCC takes target_clones on plain functions only, so templated
// routines define one function per element type under it.
#pragma once

#define TXLA_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
