/* The logits llama2.c's own run.c computes at the last of the given token ids, one per line
 * (%.9g): run.c is included unchanged, its main renamed. Built by bench/llama2c/check.sh.
 * Usage: run_logits MODEL.bin ID... */
#define main llama2c_run_main
#include "run.c"
#undef main

int main(int argc, char** argv) {
    if (argc < 3) { fprintf(stderr, "usage: run_logits MODEL.bin ID...\n"); return 1; }
    Transformer t;
    build_transformer(&t, argv[1]);
    float* logits = NULL;
    for (int i = 2; i < argc; i++) logits = forward(&t, atoi(argv[i]), i - 2);
    for (int v = 0; v < t.config.vocab_size; v++) printf("%.9g\n", logits[v]);
    free_transformer(&t);
    return 0;
}
