// Writes a small SentencePiece BPE model, trained by the SentencePiece library on a text made here,
// to argv[1]: the browser test's Llama-shaped model needs one, and a bare clone has none.
#include <sentencepiece_trainer.h>

#include <fstream>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: write_sentencepiece_model MODEL_OUT CORPUS_OUT\n";
    return 2;
  }
  {
    std::ofstream corpus(argv[2]);
    for (int i = 0; i < 300; ++i)
      corpus << "Once upon a time, a little fox named Tom found " << i % 9 << " red apples. \"Look!\" he said.\n"
             << "나는 사과를 좋아해요. 고양이가 앉았다.\n";
  }
  std::string proto;
  const auto status = sentencepiece::SentencePieceTrainer::Train(
      std::string("--input=") + argv[2] +
          " --model_prefix= --vocab_size=400 --model_type=bpe --byte_fallback=true --character_coverage=1.0 "
          "--minloglevel=2",
      nullptr, &proto);
  if (!status.ok()) {
    std::cerr << status.ToString() << "\n";
    return 1;
  }
  std::ofstream(argv[1], std::ios::binary) << proto;
  return 0;
}
