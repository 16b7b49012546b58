// A device buffer: a dense, row-major array on one device. On the CPU backend device memory is
// host memory, so a Buffer is an aligned block plus its element type and dimensions.
//
// A buffer either owns its allocation or keeps an opaque owner alive (a tensor produced by a
// kernel library), so results can become device data without a copy.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/element_type.h"
#include "runtime/execution_queue.h"

namespace txla::runtime {

class Buffer {
 public:
  // Allocates an uninitialized, 64-byte aligned buffer.
  Buffer(ElementType type, std::vector<int64_t> dims, int device_ordinal);
  // A buffer whose memory comes when the run that writes it starts (Materialize), or from a
  // donor (AdoptStorage): a queued step holds no output memory, so pipelined steps waiting
  // behind the running one do not each hold a copy of every parameter they will update.
  struct Deferred {};
  Buffer(ElementType type, std::vector<int64_t> dims, int device_ordinal, Deferred);
  // Adopts memory kept alive by `owner` (never copied, never freed here).
  Buffer(ElementType type, std::vector<int64_t> dims, int device_ordinal, void* data,
         std::shared_ptr<void> owner);
  // A value split over the devices of an SPMD program: each device's piece (its tile, padded
  // with zeros where a dimension does not divide), where each piece starts in the whole value,
  // and the sharding in XLA's syntax. Such a buffer has no memory of its own (data() is null):
  // programs read the pieces, the host assembles them (Assemble).
  struct Shards {
    // One per SPMD device; null for the devices of other processes (SPMD over processes).
    std::vector<std::shared_ptr<Buffer>> pieces;
    std::vector<std::vector<int64_t>> offsets;
    std::string sharding;
  };
  Buffer(ElementType type, std::vector<int64_t> dims, int device_ordinal, Shards shards);
  // A graph input with a shape and no value (create_placeholder_tensor): graphs reading it can
  // be traced and dumped; reading it, or running such a graph, raises.
  struct Placeholder {};
  Buffer(ElementType type, std::vector<int64_t> dims, int device_ordinal, Placeholder);
  bool placeholder() const { return placeholder_; }
  // Raises, saying so, when it is a placeholder.
  void CheckNotPlaceholder() const {
    if (placeholder_) ThrowPlaceholder();
  }
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  ElementType type() const { return type_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t element_count() const;
  size_t size_bytes() const { return static_cast<size_t>(element_count()) * ByteWidth(type_); }
  int device_ordinal() const { return device_ordinal_; }
  void* data() { return data_; }
  const void* data() const { return data_; }
  std::string ToString() const;  // "f32[2,3] on xla:0"
  // The pieces of a value split over devices; null for a whole buffer.
  const Shards* shards() const { return shards_.get(); }
  // The whole value of a split buffer, written row-major to `dst` (waits for its pieces).
  void Assemble(void* dst) const;

  // Takes over `donor`'s memory (same size, owned by the donor): this buffer's own block, if it
  // has one, is freed and `donor` keeps a borrowed pointer to what is now this buffer's. False
  // if it cannot.
  bool AdoptStorage(Buffer& donor);
  // Whether AdoptStorage could take this buffer's memory (it owns a block).
  bool CanDonate() const { return owns_ && data_ != nullptr; }
  // Whether its memory is its own, or will be once the run that writes it starts (deferred):
  // what CanDonate will say when a later run starts.
  bool OwnsStorage() const { return owns_; }
  // The user asked that the next graph run reading this buffer may write an output over it
  // (torch_xla._XLAC._set_buffer_donation), even while a tensor holds it: that tensor then lets
  // go of it at the barrier.
  void set_donation_requested(bool requested) { donation_requested_.store(requested); }
  bool donation_requested() const { return donation_requested_.load(); }
  // Shared by users that know nothing of each other (the scalar cache's buffers): no request
  // makes it donatable.
  void mark_read_only() { read_only_ = true; }
  bool read_only() const { return read_only_; }
  // Gives a deferred buffer its memory (once; later calls do nothing). Called by the run that
  // writes it, before anything can read it.
  void Materialize();

  // A buffer an asynchronous execution is still writing: reads from the host wait for it.
  void set_readiness(std::shared_ptr<Readiness> readiness) { readiness_ = std::move(readiness); }
  // Blocks until the data is written; throws the execution's error if it failed.
  void WaitReady() const {
    CheckNotPlaceholder();
    if (readiness_) readiness_->Wait();
    if (shards_)
      for (const auto& piece : shards_->pieces)
        if (piece) piece->WaitReady();  // none: another process's piece
  }
  // Written (or failed) already: reading it waits for nothing.
  bool IsReady() const {
    if (shards_)
      for (const auto& piece : shards_->pieces)
        if (piece && !piece->IsReady()) return false;
    return !readiness_ || readiness_->IsReady();
  }

 private:
  ElementType type_;
  std::vector<int64_t> dims_;
  int device_ordinal_;
  void* data_ = nullptr;
  bool owns_ = false;
  std::shared_ptr<void> owner_;
  std::shared_ptr<Readiness> readiness_;
  std::unique_ptr<const Shards> shards_;
  std::atomic<bool> donation_requested_{false};
  bool read_only_ = false;
  bool placeholder_ = false;
  [[noreturn]] void ThrowPlaceholder() const;
};

using BufferPtr = std::shared_ptr<Buffer>;

// 64-byte aligned host memory from the runtime's pool of freed blocks (scratch arenas use it too).
void* AllocateBlock(size_t bytes);
void FreeBlock(void* p, size_t bytes);

// Device memory in use: blocks handed out by AllocateBlock and not yet freed (buffers, scratch
// arenas, library scratch; not the pool's idle blocks, not memory a buffer borrows from a host
// tensor), and the most ever in use at once. The CPU devices of a process share one count.
struct MemoryUsage {
  int64_t bytes_used = 0;
  int64_t peak_bytes_used = 0;
};
MemoryUsage GetMemoryUsage();

// A scratch block from that pool, given back when destroyed. Not zeroed: library calls that
// reorder operands into scratch each call (oneDNN) spent more time zeroing and page-faulting a
// fresh multi-megabyte vector than reordering into it.
class PooledBlock {
 public:
  explicit PooledBlock(size_t bytes) : bytes_(bytes), data_(AllocateBlock(bytes)) {}
  ~PooledBlock() {
    if (data_ != nullptr) FreeBlock(data_, bytes_);
  }
  PooledBlock(PooledBlock&& other) noexcept : bytes_(other.bytes_), data_(other.data_) { other.data_ = nullptr; }
  PooledBlock(const PooledBlock&) = delete;
  PooledBlock& operator=(const PooledBlock&) = delete;
  PooledBlock& operator=(PooledBlock&&) = delete;

  void* data() const { return data_; }

 private:
  size_t bytes_;
  void* data_;
};

}  // namespace txla::runtime
