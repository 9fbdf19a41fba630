# cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... [-DPYTHON=... -DPYTHON_DIR=...]
#       -P run_consumer_test.cmake
# Installs BUILD_DIR into WORK_DIR/prefix, builds the consumer project against it and runs it;
# with PYTHON, imports the installed Python package (PYTHON_DIR, relative to the prefix) and plans.
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
foreach(f include/oomguard/mr/arena_resource.h bin/oomguard lib/liboomguard_torch.so
          lib/cmake/oomguard/oomguardConfig.cmake)
  if(NOT EXISTS ${WORK_DIR}/prefix/${f})
    message(FATAL_ERROR "the install lacks ${f}")
  endif()
endforeach()
# Public headers must not need nlohmann/json or libonnx.
file(GLOB_RECURSE headers ${WORK_DIR}/prefix/include/oomguard/*.h)
foreach(h ${headers})
  file(STRINGS ${h} bad REGEX "#include [<\"](nlohmann|onnx)/")
  if(bad)
    message(FATAL_ERROR "${h} includes a private dependency: ${bad}")
  endif()
endforeach()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
if(NOT last_output STREQUAL "ok\n")
  message(FATAL_ERROR "the consumer printed: ${last_output}")
endif()
run(${WORK_DIR}/prefix/bin/oomguard models)
if(PYTHON)
  run(${CMAKE_COMMAND} -E env PYTHONPATH=${WORK_DIR}/prefix/${PYTHON_DIR}/.. ${PYTHON}
      ${CMAKE_CURRENT_LIST_DIR}/check_python.py)
  if(NOT last_output STREQUAL "True\n")
    message(FATAL_ERROR "the installed Python package printed: ${last_output}")
  endif()
endif()
message(STATUS "consumer built and ran against ${WORK_DIR}/prefix")
