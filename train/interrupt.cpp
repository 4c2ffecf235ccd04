#include "train/interrupt.h"

#include <csignal>

namespace tinygpt::train {

namespace {
// A signal handler can only reach global state; this flag is all it touches.
volatile std::sig_atomic_t g_signal = 0;
struct sigaction g_previous_int, g_previous_term;

void on_signal(int sig) { g_signal = sig; }
}  // namespace

InterruptWatch::InterruptWatch() {
  g_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

InterruptWatch::~InterruptWatch() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

bool InterruptWatch::requested() const { return g_signal != 0; }
int InterruptWatch::signal() const { return g_signal; }

}  // namespace tinygpt::train
