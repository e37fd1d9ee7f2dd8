// mockapi: a mock rate-limited OpenAI-compatible upstream (SPEC section 3).
//   mockapi --config configs/mockapi/openai-60rpm.json [--port N] [--help]
#include "bp/mockapi/cli.h"

int main(int argc, char** argv) { return bp::mockapi::MockApiMain(argc, argv); }
