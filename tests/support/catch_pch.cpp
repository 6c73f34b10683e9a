// Compiles Catch's single header once, as a precompiled header every test reuses (tests/CMakeLists.txt):
// catch.hpp is the largest thing most test files compile. An executable, so that its code is
// position independent as the tests' is (-fPIE, not a library's -fPIC): GCC uses a precompiled
// header only where the settings match.
int main() { return 0; }
