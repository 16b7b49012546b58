// Precompiled header for the torch-aware translation units: ATen and the dispatcher dominate
// their compile time, and every one of them includes these.
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <c10/core/TensorImpl.h>
#include <torch/library.h>
