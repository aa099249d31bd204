-- tfjs_class_weight.sql: made by test/unit/fixtures/gen_class_weight.js
-- (TensorFlow.js 4.22.0); do not edit.  Case iris_like_full_batch:
-- 15 rows, fit with classWeight {"0":0.4,"1":1,"2":3.5}, SGD(lr=0.2), batch 15, 6 epochs.
-- Creates cw_data(id, x real[], cls integer), cw_init(weights real[]),
-- cw_expected(weights real[]) and the psql variable cw_arch.
\set cw_arch '{"class_name":"Sequential","config":{"name":"sequential_5","layers":[{"class_name":"Dense","config":{"units":6,"activation":"relu","use_bias":true,"kernel_initializer":{"class_name":"VarianceScaling","config":{"scale":1,"mode":"fan_avg","distribution":"normal","seed":null}},"bias_initializer":{"class_name":"Zeros","config":{}},"kernel_regularizer":null,"bias_regularizer":null,"activity_regularizer":null,"kernel_constraint":null,"bias_constraint":null,"name":"dense_Dense7","trainable":true,"batch_input_shape":[null,4],"dtype":"float32"}},{"class_name":"Dense","config":{"units":3,"activation":"softmax","use_bias":true,"kernel_initializer":{"class_name":"VarianceScaling","config":{"scale":1,"mode":"fan_avg","distribution":"normal","seed":null}},"bias_initializer":{"class_name":"Zeros","config":{}},"kernel_regularizer":null,"bias_regularizer":null,"activity_regularizer":null,"kernel_constraint":null,"bias_constraint":null,"name":"dense_Dense8","trainable":true}}]},"keras_version":"tfjs-layers 4.22.0","backend":"tensor_flow.js"}'
CREATE TABLE cw_data (id integer, x real[], cls integer);
INSERT INTO cw_data VALUES
    (1, ARRAY[-0.886490822, 0.314437389, -0.652469397, 0.859851360]::real[], 0),
    (2, ARRAY[0.563875198, 0.792512238, 0.900484979, 0.245236844]::real[], 1),
    (3, ARRAY[-0.673497677, 0.735301077, -0.540816844, -0.717636526]::real[], 2),
    (4, ARRAY[0.571515143, -0.322579205, -0.702380002, -0.630164742]::real[], 0),
    (5, ARRAY[-0.517526507, 0.652366817, -0.609945595, 0.802656472]::real[], 1),
    (6, ARRAY[0.204736933, 0.208748490, -0.440431088, -0.108993642]::real[], 2),
    (7, ARRAY[-0.172968030, 0.858164787, -0.762042880, -0.973720908]::real[], 0),
    (8, ARRAY[-0.322527379, -0.389028758, 0.368189812, -0.399360627]::real[], 1),
    (9, ARRAY[0.715284109, 0.756186903, 0.480708748, 0.186343744]::real[], 0),
    (10, ARRAY[0.299479485, -0.458207607, 0.474798769, 0.881077588]::real[], 1),
    (11, ARRAY[0.115739591, -0.0883317068, 0.136287987, -0.774442494]::real[], 0),
    (12, ARRAY[-0.457253873, -0.0445758104, 0.922826111, -0.400350392]::real[], 0),
    (13, ARRAY[-0.760782361, -0.772631466, 0.0479908884, 0.503253341]::real[], 0),
    (14, ARRAY[0.232898951, 0.590868831, 0.395472676, 0.628200710]::real[], 0),
    (15, ARRAY[0.292753339, -0.255647212, -0.705412865, -0.872578442]::real[], 0);
CREATE TABLE cw_init AS SELECT ARRAY[-0.309742481, 0.166948065, -0.491810590, -0.332265139, -0.142714515, 0.404964596, 0.371137708, -0.141203955, -0.433793873, -0.0677700639, 0.123132259, -0.588302255, -0.279902965, -0.405143559, -0.0820206851, 0.00741492165, -0.593944728, 0.0476158373, 0.435338050, 0.535667181, 0.469391733, 0.580965519, -0.0554366522, -0.212624952, 0.328059822, 0.471121967, 0.568158031, -0.457962096, 0.121068530, -0.128069386, -0.411415666, -0.181216329, 0.384629905, -0.0327169262, 0.542184770, -0.0401594043, -0.0502090864, 0.00283087417, -0.0560375899, 0.315180719, -0.344700366, -0.0842537656, 0.586970627, -0.402914643, -0.430544138, -0.418720305, -0.539937973, 0.0733823925, 0.314695984, 0.394864559, -0.572253108]::real[] AS weights;
CREATE TABLE cw_expected AS SELECT ARRAY[-0.372626692, 0.169124946, -0.492756873, -0.343411177, -0.104847558, 0.404230207, 0.501751363, -0.160019666, -0.432039022, -0.0863878354, 0.0151545582, -0.576135814, -0.437246978, -0.330335289, -0.0824998319, 0.0112938825, -0.543836236, 0.0385932773, 0.288940161, 0.592493534, 0.470114112, 0.578786612, -0.0196323749, -0.214291587, 0.541712761, 0.428284675, 0.568311751, -0.456322283, 0.0308628976, -0.159224331, -0.515715241, -0.280684739, 0.588397920, -0.0598094687, 0.518141150, 0.0109767634, -0.0806843489, -0.0121457847, -0.0105856704, 0.322967201, -0.344755292, -0.0919853151, 0.525740564, -0.488669813, -0.283558935, -0.407264531, -0.544034600, 0.0660231933, 0.196972787, 0.244788915, -0.304454267]::real[] AS weights;
