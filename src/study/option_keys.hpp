// The keys of a study file that become `kevo run` options: a model's proposer settings ([[models]])
// and the evaluation options ([run]), each with the flag it is passed as, the kind of value it
// takes and the range kevo run accepts. One table serves the parser's checks and the command line
// a cell runs with, so the two cannot disagree.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kevo {

struct OptionKey {
    enum class Kind {
        text,            // a string
        word,            // a string from `words`
        number,          // a finite number in [lo, hi]
        integer,         // an integer in [lo, hi]
        number_or_none,  // a number, or the string "none" (left out of the request)
        integer_or_none,
        flag,            // a boolean: the flag is given when true
    };
    std::string_view key;
    std::string_view flag;        // kevo run's option; empty for keys that are not passed as one
    Kind kind = Kind::text;
    double lo = 0, hi = 0;
    std::vector<std::string_view> words;
    std::vector<std::string_view> proposers;  // the proposers it applies to (empty: every one)
};

// [[models]] keys besides name and proposer.
const std::vector<OptionKey>& model_keys();
// [run] keys.
const std::vector<OptionKey>& run_keys();

const OptionKey* find_option_key(const std::vector<OptionKey>& keys, std::string_view key);
// "a number from 0 to 2, or \"none\"": what the key accepts, for error messages.
std::string accepted_text(const OptionKey& key);

}  // namespace kevo
