// A C++ program on the C SDK: the header compiles as C++ (extern "C"),
// dynafold.c links in compiled as C (sdk-guest/langtest).
#include "dynafold.h"
#include <cstdio>
#include <cstring>
int main() {
    df_decimal a, b;
    if (df_decimal_parse(df_cstr("0.1"), &a) || df_decimal_parse(df_cstr("0.2"), &b)) return 1;
    df_decimal s = df_decimal_add(&a, &b);
    char buf[32];
    size_t n = df_decimal_text(&s, buf, sizeof buf);
    std::printf("%.*s\n", (int)n, buf);
    return n == 3 && std::memcmp(buf, "0.3", 3) == 0 && df_eq(df_cstr("x"), "x") ? 0 : 1;
}
