{
  "targets": [
    {
      "target_name": "palisade",
      "sources": [
        "native/addon.cc", "native/hash.cc", "native/sha2.cc", "native/napi-args.cc", "native/derive-async.cc", "native/shm-store.cc", "native/shm-table.cc", "native/shm-file.cc", "native/claim-store.cc", "native/claim-binding.cc", "native/usage-ledger.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions", "-O2"],
      "cflags_cc!": ["-fno-exceptions", "-O2"],
      "cflags_cc": ["-std=c++17", "-O3", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-mcx16"],
      "cflags": ["-O3"],
      "ldflags": ["-latomic"]
    }
  ]
}
