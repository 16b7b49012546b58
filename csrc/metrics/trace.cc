#include "metrics/trace.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace txla::metrics {
namespace trace_internal {
std::atomic<bool> active{false};
}  // namespace trace_internal

namespace {

struct Event {
  const char* category;
  std::string name;
  int64_t start_us, end_us;
  int thread;
  std::vector<std::pair<std::string, std::string>> args;
};

// A capture holds at most this many events (about 200 MB); later ones are counted, not kept.
constexpr size_t kMaxEvents = size_t{1} << 21;

struct Timeline {
  std::mutex mu;
  std::vector<Event> events;
  size_t dropped = 0;
  std::map<int, std::string> thread_names;
  int next_thread = 1;
};
Timeline& GetTimeline() {
  static Timeline* timeline = new Timeline();  // never destroyed: worker threads may record late
  return *timeline;
}

int ThisThread() {
  thread_local int id = [] {
    Timeline& t = GetTimeline();
    std::lock_guard<std::mutex> lock(t.mu);
    return t.next_thread++;
  }();
  return id;
}

std::string Escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

namespace trace_internal {

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void Record(const char* category, std::string name, int64_t start_us, int64_t end_us,
            std::vector<std::pair<std::string, std::string>> args) {
  int thread = ThisThread();
  Timeline& t = GetTimeline();
  std::lock_guard<std::mutex> lock(t.mu);
  if (!active.load(std::memory_order_relaxed)) return;  // the capture ended meanwhile
  if (t.events.size() >= kMaxEvents) {
    ++t.dropped;
    return;
  }
  t.events.push_back(Event{category, std::move(name), start_us, end_us, thread, std::move(args)});
}

}  // namespace trace_internal

void StartTracing() {
  Timeline& t = GetTimeline();
  std::lock_guard<std::mutex> lock(t.mu);
  t.events.clear();
  t.dropped = 0;
  trace_internal::active.store(true);
}

std::string StopTracing() {
  Timeline& t = GetTimeline();
  std::vector<Event> events;
  std::map<int, std::string> names;
  size_t dropped;
  {
    std::lock_guard<std::mutex> lock(t.mu);
    trace_internal::active.store(false);
    events.swap(t.events);
    names = t.thread_names;
    dropped = t.dropped;
  }
  int pid = static_cast<int>(getpid());
  std::ostringstream out;
  out << "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"dropped_events\": " << dropped << "},\n\"traceEvents\": [\n";
  out << "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " << pid << ", \"tid\": 0, \"args\": {\"name\": "
      << "\"torch_xla (C++) process " << pid << "\"}}";
  std::set<int> threads;
  for (const Event& e : events) threads.insert(e.thread);
  for (int thread : threads) {
    auto it = names.find(thread);
    std::string name = it != names.end() ? it->second : "host thread " + std::to_string(thread);
    out << ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": " << pid << ", \"tid\": " << thread
        << ", \"args\": {\"name\": \"" << Escaped(name) << "\"}}";
  }
  for (const Event& e : events) {
    out << ",\n{\"name\": \"" << Escaped(e.name) << "\", \"cat\": \"" << e.category << "\", \"ph\": \"X\", \"ts\": "
        << e.start_us << ", \"dur\": " << (e.end_us - e.start_us) << ", \"pid\": " << pid << ", \"tid\": " << e.thread;
    if (!e.args.empty()) {
      out << ", \"args\": {";
      for (size_t k = 0; k < e.args.size(); ++k)
        out << (k ? ", " : "") << "\"" << Escaped(e.args[k].first) << "\": \"" << Escaped(e.args[k].second) << "\"";
      out << "}";
    }
    out << "}";
  }
  out << "\n]}\n";
  return out.str();
}

void NameThisThread(const std::string& name) {
  int thread = ThisThread();
  Timeline& t = GetTimeline();
  std::lock_guard<std::mutex> lock(t.mu);
  t.thread_names[thread] = name;
}

namespace {
struct HostSpan {
  std::string name;
  int64_t start_us;
  bool recording;
  std::vector<std::pair<std::string, std::string>> args;
};
thread_local std::vector<HostSpan> host_spans;
}  // namespace

void PushHostSpan(const std::string& name, std::vector<std::pair<std::string, std::string>> args) {
  bool recording = TracingActive();
  host_spans.push_back(HostSpan{name, recording ? trace_internal::NowUs() : 0, recording, std::move(args)});
}

void PopHostSpan() {
  if (host_spans.empty()) return;
  HostSpan span = std::move(host_spans.back());
  host_spans.pop_back();
  if (span.recording)
    trace_internal::Record("python", std::move(span.name), span.start_us, trace_internal::NowUs(), std::move(span.args));
}

}  // namespace txla::metrics
