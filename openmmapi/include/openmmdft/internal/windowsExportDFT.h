#ifndef OPENMMDFT_WINDOWSEXPORT_H_
#define OPENMMDFT_WINDOWSEXPORT_H_

/* Symbol visibility of the openmm-dft API library (the plugin builds on Linux and
 * macOS with default visibility; the macro keeps the Windows path open). */
#if defined(_MSC_VER)
#if defined(OPENMM_DFT_BUILDING_SHARED_LIBRARY)
#define OPENMM_EXPORT_DFT __declspec(dllexport)
#else
#define OPENMM_EXPORT_DFT __declspec(dllimport)
#endif
#else
#define OPENMM_EXPORT_DFT __attribute__((visibility("default")))
#endif

#endif
