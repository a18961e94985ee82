{
  "targets": [
    {
      "target_name": "tailor_native",
      "sources": ["src/addon.cc", "src/convert.cc", "src/tensors.cc", "src/autograd.cc", "src/js-autograd.cc", "src/device.cc", "src/distributed.cc", "src/graphs.cc", "src/jpeg.cc", "src/opcount.cc"],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<!@(node resolve-libtorch.mjs include_dirs)",
        "<!@(node resolve-jpeg.mjs include_dirs)"
      ],
      # NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS: a call that a worker thread's termination
      # interrupts (the image-list loader ends its workers mid-decode on an abort or an error)
      # cannot throw into the ending environment; without it node-addon-api rethrows and aborts
      # the whole process
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS", "<!@(node resolve-libtorch.mjs defines)", "<!@(node resolve-jpeg.mjs defines)"],
      "cflags!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17", "-std=gnu++14"],
      "cflags_cc": ["<!(node resolve-libtorch.mjs cxx_std)", "-fexceptions", "-frtti", "-O2", "-Wno-unused-parameter", "-Wno-deprecated-declarations"],
      "libraries": ["<!@(node resolve-libtorch.mjs libraries)", "<!@(node resolve-jpeg.mjs libraries)"]
    }
  ]
}
