set(FUZZERS gguf model tokenizer reference hardware_profile)  # tests/fuzz/fuzz_NAME.cpp, each with corpus/NAME
