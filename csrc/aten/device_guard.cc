// The device guard for DeviceType::XLA. Without it PyTorch refuses `.to("xla")` ("PyTorch is not
// linked with support for xla devices"). The CPU backend has one default stream per device.
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "runtime/device.h"

namespace txla::aten {
namespace {

thread_local c10::DeviceIndex current_device = 0;

struct XlaGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return c10::DeviceType::XLA; }
  c10::Device exchangeDevice(c10::Device device) const override {
    c10::Device old(c10::DeviceType::XLA, current_device);
    current_device = device.index();
    return old;
  }
  c10::Device getDevice() const override { return c10::Device(c10::DeviceType::XLA, current_device); }
  void setDevice(c10::Device device) const override { current_device = device.index(); }
  void uncheckedSetDevice(c10::Device device) const noexcept override {
    current_device = device.index();
  }
  c10::Stream getStream(c10::Device device) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, device);
  }
  c10::Stream exchangeStream(c10::Stream stream) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, stream.device());
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    return static_cast<c10::DeviceIndex>(runtime::DeviceCount());
  }
};

C10_REGISTER_GUARD_IMPL(XLA, XlaGuardImpl);

}  // namespace
}  // namespace txla::aten
