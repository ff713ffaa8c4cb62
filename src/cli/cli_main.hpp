// kevo's command line as a function, so that an executable other than kevo (a test one that installs
// scripted evaluations first) runs the very same commands.
#pragma once

namespace kevo::cli {

// Parses argv, runs the command, returns the process's exit status (docs/cli.md).
int kevo_main(int argc, char** argv);

}  // namespace kevo::cli
