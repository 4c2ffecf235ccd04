#pragma once
// The number of worker threads every parallel kernel may use (parallel.h's loops run on them).
// Results are bitwise identical for any setting.
namespace tinygpt {

// Caps the worker threads (the one piece of global state: the thread pool's setting).
// 0 restores the default (all cores); a negative count throws std::invalid_argument.
void set_num_threads(int threads);
int num_threads();

}  // namespace tinygpt
