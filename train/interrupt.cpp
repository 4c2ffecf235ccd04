#include "interrupt.h"

#include <unistd.h>

#include <csignal>

namespace tinygpt::train {

namespace {
// A signal handler can only reach global state; this flag is all it touches.
volatile std::sig_atomic_t g_signal = 0;
struct sigaction g_previous_int, g_previous_term;

// The first signal asks for a stop after the step; a second one, sent by someone who will not
// wait, ends the process at once, as the signal would have without the watch.
void on_signal(int sig) {
  if (g_signal == 0) {
    g_signal = sig;
    return;
  }
  static const char message[] = "\ntinygpt: second signal: stopping now, without saving\n";
  if (::write(STDERR_FILENO, message, sizeof message - 1) < 0) {
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}
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
