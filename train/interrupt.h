#pragma once
// Ctrl-C (SIGINT) and SIGTERM during training: instead of dying mid-step, the trainer finishes the
// step, writes a checkpoint and exits. While a watch is alive the first signal only raises a flag;
// a second one ends the process at once (without a checkpoint: the last one written stays).
namespace tinygpt::train {

class InterruptWatch {
 public:
  InterruptWatch();   // installs the handlers
  ~InterruptWatch();  // restores the previous ones
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;
  bool requested() const;
  int signal() const;  // which signal asked (0 if none)
};

}  // namespace tinygpt::train
