#pragma once
// Which sanitizer this translation unit is built under (tools/dev.sh sanitize, CMake's
// ENGRAM_SANITIZE): clang says so through __has_feature, gcc through __SANITIZE_*__.

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ENGRAM_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define ENGRAM_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(ENGRAM_ASAN)
#define ENGRAM_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(ENGRAM_TSAN)
#define ENGRAM_TSAN 1
#endif

namespace engram {

#if defined(ENGRAM_ASAN) || defined(ENGRAM_TSAN)
inline constexpr bool sanitized_build = true;
#else
inline constexpr bool sanitized_build = false;
#endif

}  // namespace engram
