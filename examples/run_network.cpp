// Run a pose-driven deformer network (.nmn or ONNX) on one pose:
//   run_network MODEL.nmn|MODEL.onnx [INPUT...]
// INPUT: the network's raw input values (missing ones are 0, the rest
// pose); prints one output value per line.
#include <charkit/core/mapped_file.h>
#include <charkit/deformer/nmn.h>
#include <charkit/deformer/onnx.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace ck = charkit;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: run_network MODEL.nmn|MODEL.onnx [INPUT...]\n";
    return 2;
  }
  auto file = ck::core::MappedFile::open(argv[1]);
  if (!file) {
    std::cerr << argv[1] << ": error " << file.error().code << ": " << file.error().message << "\n";
    return 2;
  }
  std::vector<float> given;
  for (int i = 2; i < argc; ++i) given.push_back(std::strtof(argv[i], nullptr));

  if (ck::deformer::looks_like_onnx(file->bytes())) {
    auto model = ck::deformer::load_onnx(file->bytes());
    if (!model) {
      std::cerr << argv[1] << ": " << model.error().to_string() << "\n";
      return 1;
    }
    // One input tensor: its declared shape with symbolic dimensions as 1.
    std::vector<std::int64_t> shape;
    std::size_t count = 1;
    for (const ck::deformer::OnnxDim& d : model->inputs().at(0).shape) {
      shape.push_back(d.value > 0 ? d.value : 1);
      count *= static_cast<std::size_t>(shape.back());
    }
    std::vector<float> values(count, 0.0f);
    for (std::size_t i = 0; i < values.size() && i < given.size(); ++i) values[i] = given[i];
    const ck::deformer::OnnxTensor input = ck::deformer::OnnxTensor::from_f32(shape, values);
    auto outputs = model->run({&input, 1});
    if (!outputs) {
      std::cerr << argv[1] << ": " << outputs.error().to_string() << "\n";
      return 1;
    }
    for (float v : outputs->at(0).f) std::cout << v << "\n";
    return 0;
  }

  auto network = ck::deformer::read_nmn(file->bytes());
  if (!network) {
    std::cerr << argv[1] << ": " << network.error().to_string() << "\n";
    return 1;
  }
  auto runner = ck::deformer::NmnRunner::create(*network);
  if (!runner) {
    std::cerr << argv[1] << ": " << runner.error().to_string() << "\n";
    return 1;
  }
  std::vector<float> input(runner->input_count(), 0.0f), output(runner->output_count());
  for (std::size_t i = 0; i < input.size() && i < given.size(); ++i) input[i] = given[i];
  runner->run(input, output);
  for (float v : output) std::cout << v << "\n";
  return 0;
}
