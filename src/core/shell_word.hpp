// Command lines kevo prints for the user to paste (resume hints, "runs as started"): each argument
// quoted so that a POSIX shell reads it back as the same word.
#pragma once

#include <string>
#include <vector>

namespace kevo {

// `word` bare when it is plain (letters, digits and -_./:=+,@%), else in single quotes.
std::string shell_word(const std::string& word);
// The words quoted and joined by spaces.
std::string shell_command(const std::vector<std::string>& words);

}  // namespace kevo
