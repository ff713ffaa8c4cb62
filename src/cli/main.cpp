// kevo's entry point.
#include "cli/cli_main.hpp"

int main(int argc, char** argv) { return kevo::cli::kevo_main(argc, argv); }
