// Memory + disk cache of task references (see reference_cache.hpp). Disk files are written
// atomically and carry their own length fields, so a torn or foreign file is simply a miss.
#include "eval/reference_cache.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>

#include <fmt/format.h>

#include "core/files.hpp"
#include "core/hash.hpp"
#include "task/registry.hpp"

namespace kevo {

namespace {
constexpr uint64_t kMagic = 0x3146455256454B ;  // "KEVREF1"
// Computing faster than this is cheaper than a disk round trip.
constexpr double kStoreAfterSeconds = 0.25;
constexpr uint64_t kDiskBudgetBytes = 16ull << 30;

uint64_t reference_bytes(const Reference& r) {
    uint64_t total = 0;
    for (const auto& v : r.results) total += v.size();
    return total;
}

// Drops the oldest files once the folder grows past its budget.
void prune(const std::filesystem::path& dir) {
    std::error_code ec;
    std::vector<std::pair<std::filesystem::file_time_type, std::filesystem::path>> files;
    uint64_t total = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        if (!entry.is_regular_file(ec)) continue;
        total += entry.file_size(ec);
        files.emplace_back(entry.last_write_time(ec), entry.path());
    }
    if (total <= kDiskBudgetBytes) return;
    std::sort(files.begin(), files.end());
    for (const auto& [time, path] : files) {
        if (total <= kDiskBudgetBytes) break;
        total -= std::filesystem::file_size(path, ec);
        std::filesystem::remove(path, ec);
    }
}
}  // namespace

ReferenceCache::ReferenceCache(std::filesystem::path dir, uint64_t memory_budget_bytes)
    : dir_(std::move(dir)), budget_(memory_budget_bytes) {}

std::string ReferenceCache::key_for(const Task& task, const SizeSpec& size, uint64_t seed, Trial trial,
                                    const std::string& origin) const {
    const std::string& name = task.spec().name;
    return fmt::format("{}-{}-{}-{}-{}{}", name, task_source_hash(name), hex64(hash64(size.label)), hex64(seed),
                       trial_name(trial), origin.empty() ? "" : "-" + hex64(hash64(origin)));
}

std::shared_ptr<const Reference> ReferenceCache::lookup(const std::string& key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->key == key) {
            entries_.splice(entries_.begin(), entries_, it);
            ++hits_;
            return entries_.front().reference;
        }
    }
    Reference loaded;
    if (!load(key, loaded)) return nullptr;
    ++hits_;
    auto shared = std::make_shared<const Reference>(std::move(loaded));
    remember(key, shared);
    return shared;
}

Reference ReferenceCache::get(const Task& task, const SizeSpec& size, const Case& c, uint64_t seed, Trial trial,
                              bool* computed) {
    return *share(task, size, c, seed, trial, computed);
}

std::shared_ptr<const Reference> ReferenceCache::share(const Task& task, const SizeSpec& size, const Case& c,
                                                       uint64_t seed, Trial trial, bool* computed) {
    const std::string key = key_for(task, size, seed, trial, "");
    if (computed) *computed = false;
    if (auto hit = lookup(key)) return hit;
    ++misses_;
    if (computed) *computed = true;
    const auto start = std::chrono::steady_clock::now();
    auto ref = std::make_shared<const Reference>(task.reference(size, c));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds >= kStoreAfterSeconds) store(key, *ref);
    remember(key, ref);
    return ref;
}

Expected<std::shared_ptr<const Reference>> ReferenceCache::get_or_compute(
    const Task& task, const SizeSpec& size, uint64_t seed, Trial trial, const std::string& origin,
    const std::function<Expected<Reference>()>& compute) {
    const std::string key = key_for(task, size, seed, trial, origin);
    if (auto hit = lookup(key)) return hit;
    ++misses_;
    auto computed = compute();
    if (!computed) return computed.error();
    auto ref = std::make_shared<const Reference>(std::move(*computed));
    store(key, *ref);
    remember(key, ref);
    return ref;
}

bool ReferenceCache::load(const std::string& key, Reference& out) const {
    if (dir_.empty()) return false;
    const auto path = dir_ / (key + ".ref");
    std::error_code ec;
    const uint64_t file_bytes = std::filesystem::file_size(path, ec);
    if (ec) return false;
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    uint64_t remaining = file_bytes;
    uint64_t magic = 0, count = 0;
    in.read(reinterpret_cast<char*>(&magic), 8).read(reinterpret_cast<char*>(&count), 8);
    if (!in || magic != kMagic || count > 64 || file_bytes < 16) return false;
    remaining -= 16;
    Reference ref;
    ref.results.resize(count);
    for (auto& v : ref.results) {
        uint64_t bytes = 0;
        in.read(reinterpret_cast<char*>(&bytes), 8);
        // A length beyond what the file holds is a torn or foreign file, not an allocation to attempt.
        if (!in || remaining < 8 || bytes > remaining - 8) return false;
        remaining -= 8 + bytes;
        v.resize(bytes);
        in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(bytes));
        if (!in) return false;
    }
    out = std::move(ref);
    return true;
}

void ReferenceCache::store(const std::string& key, const Reference& ref) const {
    if (dir_.empty()) return;
    std::string blob;
    blob.reserve(16 + reference_bytes(ref) + 8 * ref.results.size());
    auto put = [&](uint64_t v) { blob.append(reinterpret_cast<const char*>(&v), 8); };
    put(kMagic);
    put(ref.results.size());
    for (const auto& v : ref.results) {
        put(v.size());
        blob.append(reinterpret_cast<const char*>(v.data()), v.size());
    }
    // A cache that cannot be written costs time, not correctness.
    (void)write_file_atomic(dir_ / (key + ".ref"), blob);
    prune(dir_);
}

void ReferenceCache::remember(const std::string& key, std::shared_ptr<const Reference> ref) {
    const uint64_t bytes = reference_bytes(*ref);
    if (bytes > budget_) return;
    entries_.push_front({key, std::move(ref), bytes});
    used_ += bytes;
    while (used_ > budget_ && !entries_.empty()) {
        used_ -= entries_.back().bytes;
        entries_.pop_back();
    }
}

}  // namespace kevo
