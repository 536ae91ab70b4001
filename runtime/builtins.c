/* Conversions LLVM calls as compiler-rt functions where the host has no instruction for them (f32 and f64 to bf16 on
   x86 without AVX-512 BF16), for kernels JIT-compiled and linked in this process. Rounding is to nearest even; a NaN
   stays a quiet NaN of its sign. A bf16 result is returned as LLVM expects a half-width float: in the low 16 bits of
   the first float return register, which a float whose low bits hold it fills. */
#include <stdint.h>
#include <string.h>

static float bf16_in_float(uint32_t bits) {
  float result;
  memcpy(&result, &bits, sizeof result);
  return result;
}

static uint32_t bf16_bits(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return (bits >> 16) | 0x40u;
  return (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
}

float __truncsfbf2(float x) { return bf16_in_float(bf16_bits(x)); }

/* f64 to bf16 through f32 rounded to odd, so that the two roundings give the one correct rounding */
float __truncdfbf2(double x) {
  float narrowed = (float)x;
  uint32_t bits;
  memcpy(&bits, &narrowed, sizeof bits);
  if (narrowed == narrowed && (double)narrowed != x) {
    double back = (double)narrowed;
    if ((back < 0 ? -back : back) > (x < 0 ? -x : x)) bits -= 1; /* rounded away from zero: truncate instead */
    bits |= 1u;                                                 /* then mark it inexact: round to odd */
    memcpy(&narrowed, &bits, sizeof bits);
  }
  return bf16_in_float(bf16_bits(narrowed));
}
