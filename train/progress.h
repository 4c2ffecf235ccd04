#pragma once
// What a run shows while it trains: what it is at its start; on a terminal one live line
// (iteration/total, loss, lr, tokens/s, elapsed, ETA) redrawn each step, elsewhere (a log file, CI)
// a plain line every N steps; and how it ended.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "reporter.h"

namespace tinygpt::train {

// The console's reporter.
class Progress : public Reporter {
 public:
  Progress(std::FILE* out, bool terminal, int64_t every) : out_(out), terminal_(terminal), every_(every) {}
  void start(const StartReport& r) override;  // what the run is: sizes, memory, changes, where it writes
  void end(const EndReport& r) override;      // how it ended, and how to continue one that stopped
  void step(const StepReport& r) override;
  void message(const std::string& text) override;  // a line of its own (clears the live line first)

 private:
  std::FILE* out_;
  bool terminal_;
  int64_t every_;
  bool live_ = false;
};

// A line that shows work in progress on a terminal, redrawn at most ten times a second, and
// cleared before any other line is printed; elsewhere (a log file, CI) it shows nothing.
class LiveLine {
 public:
  LiveLine(std::FILE* out, bool terminal) : out_(out), terminal_(terminal) {}
  ~LiveLine() { clear(); }
  LiveLine(const LiveLine&) = delete;
  LiveLine& operator=(const LiveLine&) = delete;
  void show(const std::string& text);     // skipped when the last one is under 0.1 s old
  void message(const std::string& text);  // a line of its own, after the live line is cleared
  void clear();

 private:
  std::FILE* out_;
  bool terminal_;
  bool live_ = false;
  double last_ = -1;  // seconds since the epoch of the steady clock
};

std::string format_duration(double seconds);  // "1h02m", "3m05s", "12.3s"

}  // namespace tinygpt::train
