// Compiling a hot function for AVX2 as well as the baseline x86-64, the copy chosen when the
// program loads: the build itself stays portable. Only AVX2, not FMA: a fused multiply-add rounds
// once where the baseline rounds twice, so the two copies would give other results (and another
// chain for a seed) on other machines.
#pragma once

//
// Not under ThreadSanitizer: the clones are picked by an ifunc resolver, which runs while the
// program is relocated, before TSan's runtime is up, and crashes there.
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define PARASOL_WITH_AVX2_CLONE [[gnu::target_clones("avx2", "default")]]
#else
#define PARASOL_WITH_AVX2_CLONE
#endif
